-- Integration operations (sqlite). Keep this file in step with ../postgres/0017_integration_operations.sql.
-- Channels of an installation the bot may not use (updateBot integrations.<alias>.disabledChannels), a JSON array.
ALTER TABLE integration_installations ADD COLUMN disabled_channels TEXT NOT NULL DEFAULT '[]';

-- Secret values of a definition (createIntegration/updateIntegration `secrets`): given to the integration only
-- (its own API key, getIntegrationSecrets), never shown by the Admin API (which lists their names).
CREATE TABLE integration_secrets (
  definition_id TEXT NOT NULL REFERENCES integration_definitions(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (definition_id, name)
) STRICT;
