-- Per-bot webchat configuration (SQLite). Keep this file in step with ../postgres/0010_bot_webchat.sql.
-- `webchat`: JSON object of the bot's webchat settings (name, avatar, description, colour, font, radius, theme,
-- composer placeholder, launcher; src/webchat/shared/webchat-config.ts); NULL: none set (the defaults apply).
ALTER TABLE bots ADD COLUMN webchat TEXT;
