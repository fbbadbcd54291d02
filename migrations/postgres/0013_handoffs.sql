-- Human handoff (issue #18). Keep this file in step with ../sqlite/0013_handoffs.sql.
-- A conversation of a bot's chat integration handed to a person: waiting (requested), active (claimed by a
-- workspace member), ended (returned to the bot). At most one open (not ended) handoff per conversation: the
-- partial unique index makes concurrent starts resolve to one row. A claim is one conditional UPDATE
-- (claimed_by IS NULL or the same member), so two instances cannot both claim a conversation.
-- claimed_by is the member's account id; claimed_name is their display name when they claimed.
CREATE TABLE handoffs (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  integration_id TEXT NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
  conversation_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  requested_at BIGINT NOT NULL,
  claimed_by TEXT,
  claimed_name TEXT,
  claimed_at BIGINT,
  ended_at BIGINT
);
CREATE UNIQUE INDEX handoffs_open ON handoffs (integration_id, conversation_id) WHERE status <> 'ended';
CREATE INDEX handoffs_bot_status ON handoffs (bot_id, status, requested_at, id);
CREATE INDEX handoffs_conversation ON handoffs (integration_id, conversation_id, requested_at);
CREATE INDEX handoffs_bot_requested ON handoffs (bot_id, requested_at);

-- Internal notes of the agents on a handoff: never shown to the user (not in the conversation's log).
CREATE TABLE handoff_notes (
  id TEXT PRIMARY KEY NOT NULL,
  handoff_id TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
  member_id TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX handoff_notes_handoff ON handoff_notes (handoff_id, created_at);
