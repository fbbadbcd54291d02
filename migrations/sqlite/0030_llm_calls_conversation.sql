-- A conversation's model calls, newest first (the console's turn trace: issue #29 item 4; docs/console.md). Keep this
-- file in step with its twin of the other engine.
CREATE INDEX llm_calls_conversation ON llm_calls (bot_id, conversation_id, created_at);
