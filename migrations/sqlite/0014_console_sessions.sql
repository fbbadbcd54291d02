-- Console sign-in (SQLite). Keep this file in step with ../postgres/0012_console_sessions.sql.
-- kind 'session': a browser's session cookie; kind 'link': a one-time sign-in link (`parley console`).
-- Only the SHA-256 digest of the random secret is stored. A link row is deleted when used (at most once).
CREATE TABLE console_sessions (
  token_hash TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
