-- Recurring events of a bot definition (issue #25): `recurringEvents: { key: { type, payload, schedule: { cron } } }`.
-- next_at is the next occurrence to fire (ms, UTC); an instance fires it by moving next_at forward in the same
-- transaction that queues the event (compare-and-set on next_at: one instance per occurrence).
-- Keep this file in step with ../postgres/0024_recurring_events.sql.
CREATE TABLE runtime_recurring_events (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  cron TEXT NOT NULL,
  next_at INTEGER,
  last_fired_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (bot_id, key)
) STRICT;
CREATE INDEX runtime_recurring_events_due ON runtime_recurring_events (next_at);
