-- Issue #24: a console session ends with the personal access token it was made from (directly, or through a sign-in
-- link minted with it): access_token_id, deleted with the token. id: the session's public id (listConsoleSessions,
-- revokeConsoleSession), never its secret. Sessions and links made before this migration cannot say which token made
-- them: they are ended (sign in again). Keep in step with ../sqlite/0020_console_sessions_token.sql.
DELETE FROM console_sessions;
ALTER TABLE console_sessions ADD COLUMN id TEXT;
ALTER TABLE console_sessions ADD COLUMN access_token_id TEXT REFERENCES access_tokens(id) ON DELETE CASCADE;
CREATE UNIQUE INDEX console_sessions_id ON console_sessions (id);
CREATE INDEX console_sessions_account ON console_sessions (account_id);
CREATE INDEX console_sessions_access_token ON console_sessions (access_token_id);
