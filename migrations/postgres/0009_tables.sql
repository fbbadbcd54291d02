-- Tables API (PostgreSQL). Keep this file in step with ../sqlite/0009_tables.sql (which explains the columns).
-- `data` is JSONB here, queried with #> / #>> and jsonb_typeof.
CREATE TABLE bot_tables (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (bot_id, name)
);
CREATE TABLE bot_table_rows (
  id BIGSERIAL PRIMARY KEY,
  table_id TEXT NOT NULL REFERENCES bot_tables(id) ON DELETE CASCADE,
  data JSONB NOT NULL,
  key_value TEXT,
  search_text TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX bot_table_rows_key ON bot_table_rows (table_id, key_value);
CREATE INDEX bot_table_rows_table ON bot_table_rows (table_id, id);
CREATE TABLE bot_table_jobs (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  table_id TEXT NOT NULL REFERENCES bot_tables(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  progress DOUBLE PRECISION NOT NULL,
  params TEXT NOT NULL,
  input_file_id TEXT,
  output_file_id TEXT,
  error TEXT,
  attempts INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX bot_table_jobs_table ON bot_table_jobs (table_id, created_at);
CREATE INDEX bot_table_jobs_pending ON bot_table_jobs (status, lease_until, created_at);
