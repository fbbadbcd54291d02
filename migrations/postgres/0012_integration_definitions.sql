-- Integrations written with @botpress/sdk, served elsewhere (postgres). Keep this file in step with ../sqlite/0012_integration_definitions.sql.
-- A definition (createIntegration) belongs to one workspace; `definition` is its JSON (channels, actions,
-- configuration schemas, ...) as given, without secret values; `url` is where it is served.
CREATE TABLE integration_definitions (
  id TEXT PRIMARY KEY NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  url TEXT,
  dev BIGINT NOT NULL,
  signing_secret TEXT NOT NULL,
  definition TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (workspace_id, name, version)
);

-- Integration API keys (createIntegrationApiKey): the token an integration calls the Runtime API with.
CREATE TABLE integration_api_keys (
  id TEXT PRIMARY KEY NOT NULL,
  definition_id TEXT NOT NULL REFERENCES integration_definitions(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX integration_api_keys_definition ON integration_api_keys (definition_id);

-- An installation: one of a bot's integrations (table integrations, name = the alias) that runs a definition.
CREATE TABLE integration_installations (
  integration_id TEXT PRIMARY KEY NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
  definition_id TEXT NOT NULL REFERENCES integration_definitions(id) ON DELETE CASCADE,
  configuration_type TEXT
);
CREATE INDEX integration_installations_definition ON integration_installations (definition_id);

-- What an integration did or failed to do (getIntegrationLogs): deliveries, register, its answers.
CREATE TABLE integration_logs (
  id TEXT PRIMARY KEY NOT NULL,
  definition_id TEXT NOT NULL REFERENCES integration_definitions(id) ON DELETE CASCADE,
  bot_id TEXT,
  at BIGINT NOT NULL,
  level TEXT NOT NULL,
  message TEXT NOT NULL,
  conversation_id TEXT
);
CREATE INDEX integration_logs_definition_at ON integration_logs (definition_id, at, id);
