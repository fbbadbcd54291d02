-- Knowledge bases and the full-text index of indexed files (PostgreSQL). Keep in step with ../sqlite/0004_knowledge.sql.
-- A knowledge base is a named selection of a bot's files by tags; its rows hold no file list.
CREATE TABLE knowledge_bases (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  tags TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX knowledge_bases_bot ON knowledge_bases (bot_id, created_at, id);

-- Passages with a stored tsvector (english config: stemming and stop words; title weighted A).
-- Each passage carries the blob it was cut from: search only sees passages whose blob is the file's
-- current one and whose file finished indexing (see the SQLite file).
CREATE TABLE kb_passages (
  rid BIGSERIAL PRIMARY KEY,
  bot_id TEXT NOT NULL,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  blob_name TEXT NOT NULL,
  position BIGINT NOT NULL,
  title TEXT NOT NULL,
  content TEXT NOT NULL,
  meta TEXT NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', content), 'B')) STORED
);
CREATE INDEX kb_passages_tsv ON kb_passages USING GIN (tsv);
CREATE INDEX kb_passages_file ON kb_passages (file_id, blob_name, position);

-- Words seen in indexed passages, per bot: the vocabulary that query typo correction draws from.
CREATE TABLE kb_terms (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  term TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (bot_id, term)
);

-- Which instance indexes a file's content now: two instances never index the same file at once.
CREATE TABLE kb_index_claims (
  file_id TEXT PRIMARY KEY NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  blob_name TEXT NOT NULL,
  owner TEXT NOT NULL,
  claimed_at BIGINT NOT NULL
);
