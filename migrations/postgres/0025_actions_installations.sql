-- Actions and installations as Botpress has them (PostgreSQL). Keep this file in step with ../sqlite/0025_actions_installations.sql.
-- The bot's own declared actions (createBot/updateBot `actions`, what `bp deploy` sends), a JSON object; NULL: the
-- bot never declared any (its unprefixed actions are then delivered unchecked).
ALTER TABLE bots ADD COLUMN actions TEXT;

-- An installation's registration: `registered`, or `registration_failed` with the reason (getBot integrations.<alias>.status / statusReason).
ALTER TABLE integration_installations ADD COLUMN status TEXT NOT NULL DEFAULT 'registered';
ALTER TABLE integration_installations ADD COLUMN status_reason TEXT;

-- The built-in webhook's request besides its body: { method, path, query, headers } as JSON (NULL for rows queued before 0025).
ALTER TABLE webhook_deliveries ADD COLUMN request TEXT;
