-- File content in PostgreSQL (PARLEY_BLOB_STORE=postgres), so that every instance sees every upload.
-- A blob is a head row plus its content cut into chunks of at most 256 KiB (bytea), numbered from 0.
-- Both are written in one transaction: a blob is visible complete or not at all, and an aborted
-- upload (error, limit, crash, lost connection) leaves nothing. Deleting the head deletes the chunks.
-- SQLite has no equivalent migration: with SQLite, content stays on the local disk.
CREATE TABLE blobs (
  name TEXT PRIMARY KEY NOT NULL,
  size BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE blob_chunks (
  blob_name TEXT NOT NULL REFERENCES blobs(name) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  data BYTEA NOT NULL,
  PRIMARY KEY (blob_name, idx)
);
-- Chunks are already compressed data most of the time (images, PDFs, archives): skip TOAST compression.
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
