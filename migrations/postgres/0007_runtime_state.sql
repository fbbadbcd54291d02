-- Runtime API: states, events, workflows, analytics, observations, integration registration (PostgreSQL).
-- Keep this file in step with ../sqlite/0007_runtime_state.sql.

-- The bot definition's `states` ({ name: { type, schema, expiry? } }) as sent to createBot/updateBot.
-- version changes on every update: compiled JSON Schemas are cached per (bot, version).
CREATE TABLE runtime_state_definitions (
  bot_id TEXT PRIMARY KEY NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  definitions TEXT NOT NULL,
  version BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

-- States of the Runtime API (getState/setState…), one per (bot, type, resource id, name).
-- expiry: idle milliseconds (null: never); expires_at = last write + expiry. An expired row is gone for
-- readers at once; the sweep deletes it and queues its state_expired event in one transaction.
CREATE TABLE runtime_states (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  name TEXT NOT NULL,
  id TEXT NOT NULL UNIQUE,
  payload TEXT NOT NULL,
  expiry BIGINT,
  expires_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (bot_id, type, resource_id, name)
);
CREATE INDEX runtime_states_expiring ON runtime_states (expires_at) WHERE expires_at IS NOT NULL;

-- Events created through the Runtime API (createEvent) and by Parley itself (state_expired).
-- status: scheduled (due_at in the future) → pending (due; a worker claims it with a lease) →
-- processed | failed | ignored; canceled (cancelScheduledEvent). conversation_seq: the event was
-- appended to its conversation's log (the bot runtime's work queue) at that sequence number, in the
-- conversation of integration_id; it reads as processed once the bot's cursor (conversations.bot_seq) passed it.
CREATE TABLE runtime_events (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  conversation_id TEXT,
  user_id TEXT,
  message_id TEXT,
  workflow_id TEXT,
  status TEXT NOT NULL,
  failure_reason TEXT,
  due_at BIGINT NOT NULL,
  attempts INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT NOT NULL,
  conversation_seq BIGINT,
  integration_id TEXT,
  created_at BIGINT NOT NULL,
  processed_at BIGINT
);
CREATE INDEX runtime_events_due ON runtime_events (status, due_at, lease_until);
CREATE INDEX runtime_events_bot ON runtime_events (bot_id, created_at, id);

-- Workflows (data only: Parley has no Botpress workflow engine).
CREATE TABLE runtime_workflows (
  id TEXT PRIMARY KEY NOT NULL,
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  input TEXT NOT NULL,
  output TEXT NOT NULL,
  parent_workflow_id TEXT,
  conversation_id TEXT,
  user_id TEXT,
  event_id TEXT,
  failure_reason TEXT,
  tags TEXT NOT NULL,
  timeout_at BIGINT NOT NULL,
  completed_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX runtime_workflows_bot ON runtime_workflows (bot_id, created_at, id);
-- Tags in rows, as for bots: tag filters and getOrCreate's discrimination are plain SQL.
CREATE TABLE runtime_workflow_tags (
  workflow_id TEXT NOT NULL REFERENCES runtime_workflows(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (workflow_id, key)
);
CREATE INDEX runtime_workflow_tags_key_value ON runtime_workflow_tags (key, value);

-- trackAnalytics: one counter per (bot, name, UTC day).
CREATE TABLE runtime_analytics (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  day TEXT NOT NULL,
  count BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (bot_id, name, day)
);

-- captureObservation: the newest observations of each bot (older ones are trimmed).
CREATE TABLE runtime_observations (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  data TEXT NOT NULL,
  refs TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (bot_id, id)
);
CREATE INDEX runtime_observations_bot ON runtime_observations (bot_id, created_at, id);

-- configureIntegration: what an integration said about itself (identifier, register schedule, sandbox identifiers).
CREATE TABLE runtime_integration_registrations (
  integration_id TEXT PRIMARY KEY NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
  identifier TEXT,
  schedule_register_call TEXT,
  sandbox_identifiers TEXT,
  updated_at BIGINT NOT NULL
);

-- listEvents over the Chat API's custom events of a conversation log, by date.
CREATE INDEX events_integration_created ON events (integration_id, created_at, id);
