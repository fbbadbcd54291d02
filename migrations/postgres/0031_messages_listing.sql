-- A conversation's messages are listed on the seq index every append writes anyway (integration_id, conversation_id,
-- seq): createdAt grows with seq in a conversation (last_at), so this second index on created_at only cost each append
-- its upkeep (KyselyBotChatStore.listConversationMessages). Keep this file in step with ../sqlite/0031_messages_listing.sql.
DROP INDEX IF EXISTS messages_conversation_created;
