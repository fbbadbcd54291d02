-- Hosted code (issue #26 item 2) (sqlite). Keep this file in step with ../postgres/0028_hosted_code.sql.
-- A deployed bundle's version (new at each deploy: Parley swaps its process), and the API key its process calls
-- Parley with (the value, for the process's BP_TOKEN on any instance; key_id, the bot's or integration's key row).
ALTER TABLE bot_bundles ADD COLUMN version TEXT NOT NULL DEFAULT '';
ALTER TABLE bot_bundles ADD COLUMN token TEXT NOT NULL DEFAULT '';
ALTER TABLE bot_bundles ADD COLUMN key_id TEXT NOT NULL DEFAULT '';

-- An integration version's CommonJS bundle (updateIntegration({ code }) as `bp deploy` sends it), run as hosted code.
CREATE TABLE integration_bundles (
  integration_id TEXT PRIMARY KEY NOT NULL REFERENCES integration_definitions(id) ON DELETE CASCADE,
  code TEXT NOT NULL,
  version TEXT NOT NULL,
  token TEXT NOT NULL,
  key_id TEXT NOT NULL,
  deployed_at INTEGER NOT NULL
) STRICT;
