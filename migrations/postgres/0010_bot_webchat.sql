-- Per-bot webchat configuration (PostgreSQL). Keep this file in step with ../sqlite/0010_bot_webchat.sql.
-- `webchat`: JSON object of the bot's webchat settings (name, avatar, description, colour, font, radius, theme,
-- composer placeholder, launcher; src/webchat/shared/webchat-config.ts); NULL: none set (the defaults apply).
ALTER TABLE bots ADD COLUMN webchat TEXT;
