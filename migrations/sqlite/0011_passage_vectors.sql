-- Embedding vectors of knowledge passages (hybrid retrieval, issue #17). Keep in step with ../postgres/0011_passage_vectors.sql.
-- One row per passage and embedding model. A passage is named by its kb_passages rowid AND its (file, blob, position):
-- FTS5 may hand a freed rowid to a new passage, so a vector counts only while all four still match.
-- The vector is L2-normalized float32, little-endian (sqlite-vec's format); dims 0 and an empty vector mark a
-- passage the service refused (it is not asked again for that model). `signs` is its sign-bit sketch (bit i set when
-- component i > 0, sqlite-vec's bit-vector format), in a covering index: a search scans the narrow index by Hamming
-- distance and reads the full vectors of the best candidates only.
CREATE TABLE kb_passage_vectors (
  model TEXT NOT NULL,
  passage_rid INTEGER NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  blob_name TEXT NOT NULL,
  position INTEGER NOT NULL,
  dims INTEGER NOT NULL,
  vector BLOB NOT NULL,
  signs BLOB NOT NULL,
  PRIMARY KEY (model, passage_rid)
) STRICT;
CREATE INDEX kb_passage_vectors_bot ON kb_passage_vectors (bot_id, model, dims, file_id, blob_name, passage_rid, signs);
CREATE INDEX kb_passage_vectors_file ON kb_passage_vectors (file_id);

-- Which instance embeds a file's passages now (stale claims are taken over, as for kb_index_claims).
CREATE TABLE kb_vector_claims (
  file_id TEXT PRIMARY KEY NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  owner TEXT NOT NULL,
  claimed_at INTEGER NOT NULL
) STRICT;
