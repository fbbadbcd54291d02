-- Outgoing delivery to integrations served elsewhere (issue #19). Keep this file in step with ../sqlite/0016_integration_outbox.sql.
-- One row per conversation of an installed integration: a cursor over the conversation's log. Every bot message
-- (message_created signal with is_bot) after delivered_seq is still to be sent to the integration (message_created),
-- in sequence order; the cursor moves past a message once it was delivered or given up (its status is then the
-- message's tag parley:delivery). The instance sending owns the row until lease_until (ms): one sender per
-- conversation, cluster-wide; a dead instance's lease expires and another takes over. A conversation without a row
-- has nothing delivered yet (cursor 0): the row is made by the first claim.
CREATE TABLE integration_outbox (
  integration_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  delivered_seq BIGINT NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_until BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (integration_id, conversation_id),
  FOREIGN KEY (integration_id, conversation_id) REFERENCES conversations(integration_id, id) ON DELETE CASCADE
);

-- Conversations that existed before this migration had their bot messages sent by the former in-memory queue:
-- their cursor starts at their end, so nothing is sent twice.
INSERT INTO integration_outbox (integration_id, conversation_id, delivered_seq, lease_owner, lease_until)
  SELECT c.integration_id, c.id, c.last_seq, NULL, 0
  FROM conversations c JOIN integration_installations i ON i.integration_id = c.integration_id;
