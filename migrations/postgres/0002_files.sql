-- Files API (PostgreSQL). Keep this file in step with ../sqlite/0002_files.sql.
-- A file row holds metadata only: the content is a blob in the BlobStore, stored under a random
-- name (blob_name), never under the caller's key. blob_name is NULL until the first upload lands,
-- a re-upsert keeps the previous blob until the new upload replaces it.
-- upload_nonce is rotated by every upsert: upload URLs carry it, so superseded URLs stop working.
-- COLLATE "C" on sortable text columns: byte order, as in SQLite, so listFiles sorts and pages the same on both engines.
CREATE TABLE files (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  key TEXT COLLATE "C" NOT NULL,
  content_type TEXT NOT NULL,
  size BIGINT,
  status TEXT COLLATE "C" NOT NULL,
  failed_status_reason TEXT,
  blob_name TEXT,
  upload_nonce TEXT NOT NULL,
  metadata TEXT NOT NULL,
  access_policies TEXT NOT NULL,
  indexed BIGINT NOT NULL,
  expires_at BIGINT,
  owner_type TEXT NOT NULL,
  owner_id TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (bot_id, key)
);
CREATE INDEX files_bot_created ON files (bot_id, created_at, id);
CREATE INDEX files_bot_updated ON files (bot_id, updated_at, id);
CREATE INDEX files_bot_status ON files (bot_id, status, id);
CREATE INDEX files_expires ON files (expires_at);

-- Tags live in rows (not JSON) so that tag filters are plain, portable, indexable SQL.
CREATE TABLE file_tags (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  key TEXT COLLATE "C" NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (file_id, key)
);
CREATE INDEX file_tags_key_value ON file_tags (key, value, file_id);
