-- Tables API (SQLite). Keep this file in step with ../postgres/0009_tables.sql.
-- bot_tables: one row per table of a bot; `definition` is the JSON of its schema, keyColumn, factor, frozen,
-- tags and isComputeEnabled (validated by the domain, src/domain/tables/table-schema.ts).
-- bot_table_rows: every table's rows, the row's columns as one JSON document (`data`), queried with
-- json_extract; `key_value` is the JSON text of the key column's value (unique per table: upserts and key
-- lookups use its index); `search_text` the lower-cased text of the searchable columns.
-- bot_table_jobs: import/export/delete jobs, claimed by workers with a lease (resumed after a restart).
CREATE TABLE bot_tables (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (bot_id, name)
) STRICT;
CREATE TABLE bot_table_rows (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  table_id TEXT NOT NULL REFERENCES bot_tables(id) ON DELETE CASCADE,
  data TEXT NOT NULL,
  key_value TEXT,
  search_text TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX bot_table_rows_key ON bot_table_rows (table_id, key_value);
CREATE INDEX bot_table_rows_table ON bot_table_rows (table_id, id);
CREATE TABLE bot_table_jobs (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  table_id TEXT NOT NULL REFERENCES bot_tables(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  progress REAL NOT NULL,
  params TEXT NOT NULL,
  input_file_id TEXT,
  output_file_id TEXT,
  error TEXT,
  attempts INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX bot_table_jobs_table ON bot_table_jobs (table_id, created_at);
CREATE INDEX bot_table_jobs_pending ON bot_table_jobs (status, lease_until, created_at);
