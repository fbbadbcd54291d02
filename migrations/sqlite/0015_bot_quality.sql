-- What the bot runtime records about how well a bot serves (issue #18, the console's dashboard). Keep this file in
-- step with ../postgres/0015_bot_quality.sql.
-- bot_turn_failures: one row per conversation turn (a user's message or event, or the conversation's start) whose
-- bot code failed: reason 'error' (it threw), 'timeout' (stopped at its time budget), 'memory', 'crashed'. Keyed by
-- the turn's source (message, event or start id): a turn run again after a restart is recorded once.
CREATE TABLE bot_turn_failures (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  source_id TEXT NOT NULL,
  conversation_id TEXT,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (bot_id, source_id)
) STRICT;
CREATE INDEX bot_turn_failures_bot_created ON bot_turn_failures (bot_id, created_at);

-- knowledge_searches: one row per knowledge search of bot code (client.searchKnowledge, knowledge cards), with
-- whether no passage reached the relevance threshold (no_answer = 1) and the best relevance found. The id is
-- derived from the turn and the search's position in it (run again after a restart: recorded once).
CREATE TABLE knowledge_searches (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  conversation_id TEXT,
  query TEXT NOT NULL,
  no_answer INTEGER NOT NULL,
  best_relevance REAL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (bot_id, id)
) STRICT;
CREATE INDEX knowledge_searches_bot_created ON knowledge_searches (bot_id, created_at);
