-- Knowledge bases and the full-text index of indexed files (SQLite). Keep in step with ../postgres/0004_knowledge.sql.
-- A knowledge base is a named selection of a bot's files by tags; its rows hold no file list.
CREATE TABLE knowledge_bases (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  tags TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX knowledge_bases_bot ON knowledge_bases (bot_id, created_at, id);

-- Passages in one FTS5 table (porter stemming, bm25). Each passage carries the blob it was cut from:
-- search only sees passages whose blob is the file's current one and whose file finished indexing,
-- so a re-upload hides the old passages at once and a half-written new set is never visible.
-- No triggers (the migrator splits on ';' at line ends): the store deletes passages explicitly.
CREATE VIRTUAL TABLE kb_passages USING fts5(
  title, content,
  bot_id UNINDEXED, file_id UNINDEXED, blob_name UNINDEXED, position UNINDEXED, meta UNINDEXED,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Words seen in indexed passages, per bot: the vocabulary that query typo correction draws from.
CREATE TABLE kb_terms (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  term TEXT NOT NULL,
  PRIMARY KEY (bot_id, term)
) STRICT;

-- Which instance indexes a file's content now (several instances share a PostgreSQL store; harmless here).
CREATE TABLE kb_index_claims (
  file_id TEXT PRIMARY KEY NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  blob_name TEXT NOT NULL,
  owner TEXT NOT NULL,
  claimed_at INTEGER NOT NULL
) STRICT;
