-- Runtime API data (SQLite). Keep this file in step with ../postgres/0006_runtime_chat.sql.
-- Conversations created through the Runtime API have no end user as owner: their owner_id is ''
-- (no user can have that id: foreign ids are 1-100 characters), and they start with no participant.
-- Runtime fields of the Botpress objects: a conversation's channel ('channel' for the chat
-- integration's own) and shared properties, a user's properties and attributes (JSON objects of
-- strings), a message's last update (NULL: never updated, its createdAt).
ALTER TABLE conversations ADD COLUMN channel TEXT NOT NULL DEFAULT 'channel';
ALTER TABLE conversations ADD COLUMN properties TEXT;
ALTER TABLE users ADD COLUMN properties TEXT;
ALTER TABLE users ADD COLUMN attributes TEXT;
ALTER TABLE messages ADD COLUMN updated_at INTEGER;

-- Bot-wide listing (Runtime API listConversations / listMessages / listUsers, newest first).
CREATE INDEX conversations_created ON conversations (integration_id, created_at, id);
CREATE INDEX messages_conversation_created ON messages (integration_id, conversation_id, created_at, id);
CREATE INDEX messages_created ON messages (integration_id, created_at, id);
CREATE INDEX users_created ON users (integration_id, created_at, id);

-- Tags in rows (as bot_tags): tag filters are plain indexed SQL; rows go with what they tag.
CREATE TABLE user_tags (
  integration_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (integration_id, user_id, key),
  FOREIGN KEY (integration_id, user_id) REFERENCES users(integration_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX user_tags_key_value ON user_tags (integration_id, key, value);

CREATE TABLE conversation_tags (
  integration_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (integration_id, conversation_id, key),
  FOREIGN KEY (integration_id, conversation_id) REFERENCES conversations(integration_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX conversation_tags_key_value ON conversation_tags (integration_id, key, value);

CREATE TABLE message_tags (
  message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  integration_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (message_id, key)
) STRICT;
CREATE INDEX message_tags_key_value ON message_tags (integration_id, key, value);
