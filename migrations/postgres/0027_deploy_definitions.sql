-- What `bp deploy` stores (issue #26 item 1) (postgres). Keep this file in step with ../sqlite/0027_deploy_definitions.sql.
-- A workspace's handle (updateWorkspace({ handle }), checkHandleAvailability): one per workspace, unique on the instance.
CREATE TABLE workspace_handles (
  handle TEXT PRIMARY KEY NOT NULL,
  workspace_id TEXT NOT NULL UNIQUE REFERENCES workspaces(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL
);

-- An integration deployed with `--visibility public` (or unlisted) is found by every workspace's hub routes
-- (getPublicIntegration); a private one only by its own workspace.
ALTER TABLE integration_definitions ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private';
CREATE INDEX integration_definitions_hub ON integration_definitions (name, visibility);

-- Interface and plugin definitions (createInterface, createPlugin), by workspace, name and version. `definition`
-- is the JSON as given (entities, events, actions, channels, configuration, dependencies, icon, readme...);
-- `code` a plugin's bundles as JSON { node, browser }.
CREATE TABLE package_definitions (
  id TEXT PRIMARY KEY NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  visibility TEXT NOT NULL,
  definition TEXT NOT NULL,
  code TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (workspace_id, kind, name, version)
);
CREATE INDEX package_definitions_hub ON package_definitions (kind, name, visibility);

-- A bot's plugins (updateBot({ plugins: { <alias>: { id, configuration, interfaces, integrations } } })).
-- plugin_id has no foreign key: a public plugin may belong to another workspace.
CREATE TABLE bot_plugins (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  alias TEXT NOT NULL,
  plugin_id TEXT NOT NULL,
  installation TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (bot_id, alias)
);

-- A bot's CommonJS bundle as `bp deploy` sends it (updateBot({ code })), kept for hosted code (#26 item 2).
CREATE TABLE bot_bundles (
  bot_id TEXT PRIMARY KEY NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  code TEXT NOT NULL,
  deployed_at BIGINT NOT NULL
);
