-- Remote bots (PostgreSQL). Keep this file in step with ../sqlite/0008_bot_url.sql.
-- `url`: where a bot served elsewhere (an @botpress/sdk program) receives its events as signed HTTP POSTs;
-- NULL: the bot's turns run in the sandbox (its deployed code), as before.
ALTER TABLE bots ADD COLUMN url TEXT;
