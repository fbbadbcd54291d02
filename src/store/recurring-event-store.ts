import type { JsonObject } from './rows.js'
import type { NewRuntimeEvent } from './runtime-event-store.js'

/**
 * A bot definition's recurring events (migrations/<dialect>/0024_recurring_events.sql): `recurringEvents: { key:
 * { type, payload, schedule: { cron } } }`. `nextAt` is the next occurrence to fire; firing one moves it forward and
 * queues the event in one transaction, conditional on `nextAt` being unchanged, so one instance fires each occurrence.
 */
export interface RecurringEventRow {
  botId: string
  key: string
  type: string
  payload: JsonObject
  cron: string
  /** The next occurrence to fire (ms); null when the schedule has none left. */
  nextAt: number | null
  lastFiredAt: number | null
  createdAt: number
  updatedAt: number
}

export interface RecurringEventInput { key: string; type: string; payload: JsonObject; cron: string; nextAt: number | null }

export interface RecurringEventStore {
  list(botId: string): Promise<RecurringEventRow[]>
  /** Upserts `put` (a key whose cron is unchanged keeps its nextAt) and removes `remove`, in one transaction. */
  declare(botId: string, put: RecurringEventInput[], remove: string[], now: number): Promise<void>
  /** Rows whose nextAt has come, earliest first. */
  due(now: number, limit: number): Promise<RecurringEventRow[]>
  /**
   * Fires `row`'s occurrence: moves nextAt from row.nextAt to `nextAt` and inserts `event`, in one transaction; false
   * (nothing inserted) when nextAt had moved already (another instance fired it, or the schedule changed).
   */
  fire(row: RecurringEventRow, occurrence: number, nextAt: number | null, event: NewRuntimeEvent): Promise<boolean>
}
