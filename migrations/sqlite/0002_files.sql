-- Files API (SQLite). Keep this file in step with ../postgres/0002_files.sql.
-- A file row holds metadata only: the content is a blob in the BlobStore, stored under a random
-- name (blob_name), never under the caller's key. blob_name is NULL until the first upload lands,
-- a re-upsert keeps the previous blob until the new upload replaces it.
-- upload_nonce is rotated by every upsert: upload URLs carry it, so superseded URLs stop working.
CREATE TABLE files (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER,
  status TEXT NOT NULL,
  failed_status_reason TEXT,
  blob_name TEXT,
  upload_nonce TEXT NOT NULL,
  metadata TEXT NOT NULL,
  access_policies TEXT NOT NULL,
  indexed INTEGER NOT NULL,
  expires_at INTEGER,
  owner_type TEXT NOT NULL,
  owner_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (bot_id, key)
) STRICT;
CREATE INDEX files_bot_created ON files (bot_id, created_at, id);
CREATE INDEX files_bot_updated ON files (bot_id, updated_at, id);
CREATE INDEX files_bot_status ON files (bot_id, status, id);
CREATE INDEX files_expires ON files (expires_at);

-- Tags live in rows (not JSON) so that tag filters are plain, portable, indexable SQL.
CREATE TABLE file_tags (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (file_id, key)
) STRICT;
CREATE INDEX file_tags_key_value ON file_tags (key, value, file_id);
