-- Webhook integration (PostgreSQL). Keep this file in step with ../sqlite/0005_webhooks.sql.
-- A delivery is acknowledged (200) only once its body is a durable blob and this row exists: the row is
-- the queue entry that survives restarts. Workers claim a pending row with a lease (lease_owner,
-- lease_until); an expired lease (dead instance) lets another worker take it over.
-- idempotency_key is NULL without the header; UNIQUE makes a repeated key resolve to the first delivery.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY NOT NULL,
  integration_id TEXT NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
  idempotency_key TEXT,
  blob_name TEXT,
  size BIGINT NOT NULL,
  content_type TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  processed_at BIGINT,
  UNIQUE (integration_id, idempotency_key)
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (status, lease_until, created_at);
