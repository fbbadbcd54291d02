-- Issue #24: the integration installation whose API key (iak_) created a workflow or a Runtime event; an integration
-- key reads and changes only its own (null: the bot's, or Parley's). Keep in step with ../sqlite/0019_runtime_installation_scope.sql.
ALTER TABLE runtime_workflows ADD COLUMN installation_id TEXT;
ALTER TABLE runtime_events ADD COLUMN installation_id TEXT;
