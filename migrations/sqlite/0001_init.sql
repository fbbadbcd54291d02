-- Parley initial schema (SQLite). Timestamps are integer milliseconds since the epoch (UTC);
-- JSON documents are TEXT. Keep this file in step with ../postgres/0001_init.sql.
CREATE TABLE workspaces (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE accounts (
  id TEXT PRIMARY KEY NOT NULL,
  email TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE workspace_members (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, account_id)
) STRICT;

CREATE TABLE access_tokens (
  id TEXT PRIMARY KEY NOT NULL,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX access_tokens_account ON access_tokens (account_id);

CREATE TABLE bots (
  id TEXT PRIMARY KEY NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  tags TEXT NOT NULL,
  dev INTEGER NOT NULL,
  signing_secret TEXT NOT NULL,
  code TEXT,
  -- Seconds each hook, action or card run of this bot may take (null: the instance default).
  max_execution_time INTEGER,
  deployed_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX bots_workspace_created ON bots (workspace_id, created_at, id);
CREATE INDEX bots_workspace_updated ON bots (workspace_id, updated_at, id);

-- Tags live in rows (not JSON) so that tag filters are plain, portable, indexable SQL.
CREATE TABLE bot_tags (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (bot_id, key)
) STRICT;
CREATE INDEX bot_tags_key_value ON bot_tags (key, value);

-- Bot API keys: the bot access tokens its code and integrations use (Files API).
CREATE TABLE bot_api_keys (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX bot_api_keys_bot ON bot_api_keys (bot_id);

-- Instance-wide settings shared by every Parley instance on this database (e.g. the URL-signing secret).
CREATE TABLE settings (
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE integrations (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  webhook_id TEXT NOT NULL UNIQUE,
  encryption_key TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  configuration TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (bot_id, name)
) STRICT;

-- Users are scoped to one integration: the same person through two integrations is two users.
CREATE TABLE users (
  integration_id TEXT NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  name TEXT,
  picture_url TEXT,
  profile TEXT,
  is_bot INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (integration_id, id)
) STRICT;

CREATE TABLE user_keys (
  key_hash TEXT PRIMARY KEY NOT NULL,
  integration_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  FOREIGN KEY (integration_id, user_id) REFERENCES users(integration_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX user_keys_user ON user_keys (integration_id, user_id);

-- last_seq numbers every signal of the conversation (messages, events, participant changes,
-- deletions); it is the SSE event id. last_at keeps createdAt strictly increasing.
CREATE TABLE conversations (
  integration_id TEXT NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  -- The bot has processed every incoming message and event up to this sequence number.
  bot_seq INTEGER NOT NULL DEFAULT 0,
  -- The instance running this conversation's turns, until bot_lease_until (ms): one at a time, cluster-wide.
  bot_lease_owner TEXT,
  bot_lease_until INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (integration_id, id)
) STRICT;

CREATE TABLE participants (
  integration_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (integration_id, conversation_id, user_id),
  FOREIGN KEY (integration_id, conversation_id) REFERENCES conversations(integration_id, id) ON DELETE CASCADE,
  FOREIGN KEY (integration_id, user_id) REFERENCES users(integration_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX participants_user ON participants (integration_id, user_id, conversation_id);

CREATE TABLE messages (
  id TEXT PRIMARY KEY NOT NULL,
  integration_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  is_bot INTEGER NOT NULL,
  payload TEXT NOT NULL,
  metadata TEXT,
  -- 1 when the bot's beforeIncoming hook stopped this message: stored and delivered, but no turn runs.
  bot_skip INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  UNIQUE (integration_id, conversation_id, seq),
  FOREIGN KEY (integration_id, conversation_id) REFERENCES conversations(integration_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE events (
  id TEXT PRIMARY KEY NOT NULL,
  integration_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  is_bot INTEGER NOT NULL,
  payload TEXT NOT NULL,
  bot_skip INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  UNIQUE (integration_id, conversation_id, seq),
  FOREIGN KEY (integration_id, conversation_id) REFERENCES conversations(integration_id, id) ON DELETE CASCADE
) STRICT;

-- Bot state saved between turns: scope 'user' | 'conversation' | 'bot' | 'flow'.
CREATE TABLE bot_states (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  data TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (bot_id, scope, scope_id)
) STRICT;

-- What bot code writes with console.* and the runtime's own failure records.
CREATE TABLE bot_logs (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  at INTEGER NOT NULL,
  level TEXT NOT NULL,
  message TEXT NOT NULL,
  conversation_id TEXT
) STRICT;
CREATE INDEX bot_logs_bot_at ON bot_logs (bot_id, at, id);

-- Signals that have no row of their own (participant changes, message deletions), kept so
-- that a stream reconnecting with Last-Event-ID can replay them.
CREATE TABLE conversation_signals (
  integration_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (integration_id, conversation_id, seq),
  FOREIGN KEY (integration_id, conversation_id) REFERENCES conversations(integration_id, id) ON DELETE CASCADE
) STRICT;
