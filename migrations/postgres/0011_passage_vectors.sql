-- Embedding vectors of knowledge passages (hybrid retrieval, issue #17). Keep in step with ../sqlite/0011_passage_vectors.sql.
-- One row per passage (kb_passages.rid, never reused here) and embedding model. Portable representation (no pgvector):
-- the L2-normalized vector as real[], scored in SQL, and its sign bits (bit i = vector[i] > 0) for a cheap Hamming
-- pre-selection before the exact scoring. dims 0 and empty arrays mark a passage the service refused.
CREATE TABLE kb_passage_vectors (
  model TEXT NOT NULL,
  passage_rid BIGINT NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  blob_name TEXT NOT NULL,
  position BIGINT NOT NULL,
  dims INTEGER NOT NULL,
  vector REAL[] NOT NULL,
  signs BIT VARYING NOT NULL,
  PRIMARY KEY (model, passage_rid)
);
CREATE INDEX kb_passage_vectors_bot ON kb_passage_vectors (bot_id, model, dims);
CREATE INDEX kb_passage_vectors_file ON kb_passage_vectors (file_id);

-- Which instance embeds a file's passages now (stale claims are taken over, as for kb_index_claims).
CREATE TABLE kb_vector_claims (
  file_id TEXT PRIMARY KEY NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  owner TEXT NOT NULL,
  claimed_at BIGINT NOT NULL
);
