import { errors } from '../lib/errors.js'
import { CronError, nextOccurrence, parseCron, previousOccurrence } from '../lib/cron.js'
import { uuidv7 } from '../lib/ids.js'
import type { RecurringEventInput } from '../store/recurring-event-store.js'
import type { JsonObject, Store } from '../store/store.js'

/** Bounds of a bot definition's recurring events. */
const MAX_RECURRING_EVENTS = 50
const MAX_KEY_LENGTH = 200
const MAX_PAYLOAD_BYTES = 64 * 1024
/** Recurring events fired per pass of one instance's poll. */
const FIRE_BATCH = 100

/**
 * A bot definition's `recurringEvents` (`{ key: { type, payload, schedule: { cron } } }`, 5-field cron in UTC:
 * src/lib/cron.ts). Each occurrence becomes one bot-level event of that type and payload in the runtime event queue
 * (delivered like createEvent's, src/domain/runtime-event-service.ts); an instance fires an occurrence by moving the
 * row's next occurrence forward in the transaction that queues the event, so one instance fires each. After downtime
 * only the latest missed occurrence fires (at most one, no catch-up storm); one declared or changed now fires from its
 * next occurrence on. docs/workflows.md, "Recurring events".
 */
export class RecurringEventService {
  private readonly clock: () => number

  constructor(private readonly store: Store, options: { clock?: () => number } = {}) {
    this.clock = options.clock ?? Date.now
  }

  /** Checks createBot/updateBot's `recurringEvents` (400 with the reason); the entries to store and the keys to remove. */
  check(input: unknown): { put: Omit<RecurringEventInput, 'nextAt'>[]; remove: string[] } {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw errors.invalidPayload('recurringEvents must be an object { key: { type, payload, schedule: { cron } } }')
    const entries = Object.entries(input as Record<string, unknown>)
    if (entries.length > MAX_RECURRING_EVENTS) throw errors.invalidPayload(`A bot has at most ${MAX_RECURRING_EVENTS} recurring events`)
    const put: Omit<RecurringEventInput, 'nextAt'>[] = []
    const remove: string[] = []
    for (const [key, value] of entries) {
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw errors.invalidPayload(`recurringEvents keys must be 1 to ${MAX_KEY_LENGTH} characters`)
      if (value === null) {
        remove.push(key)
        continue
      }
      const where = `recurringEvents.${key}`
      if (typeof value !== 'object' || Array.isArray(value)) throw errors.invalidPayload(`${where} must be an object { type, payload, schedule: { cron } } or null`)
      const { type, payload, schedule } = value as Record<string, unknown>
      if (typeof type !== 'string' || type.length === 0 || type.length > MAX_KEY_LENGTH) throw errors.invalidPayload(`${where}.type must be an event type (1 to ${MAX_KEY_LENGTH} characters)`)
      if (payload !== undefined && (typeof payload !== 'object' || payload === null || Array.isArray(payload))) throw errors.invalidPayload(`${where}.payload must be an object`)
      if (JSON.stringify(payload ?? {}).length > MAX_PAYLOAD_BYTES) throw errors.invalidPayload(`${where}.payload is larger than ${MAX_PAYLOAD_BYTES} bytes`)
      const cron = (schedule as { cron?: unknown } | null | undefined)?.cron
      if (typeof cron !== 'string') throw errors.invalidPayload(`${where}.schedule.cron must be a cron expression (5 fields, UTC)`)
      try {
        parseCron(cron)
      } catch (err) {
        if (err instanceof CronError) throw errors.invalidPayload(`${where}.schedule.cron "${cron.slice(0, 100)}": ${err.message}`)
        throw err
      }
      put.push({ key, type, payload: (payload ?? {}) as JsonObject, cron: cron.trim() })
    }
    return { put, remove }
  }

  /** Applies `recurringEvents` (null removes a key; an unchanged schedule keeps its next occurrence). */
  async declare(botId: string, input: unknown): Promise<void> {
    const { put, remove } = this.check(input)
    const now = this.clock()
    await this.store.recurringEvents.declare(botId, put.map((e) => ({ ...e, nextAt: nextOccurrence(parseCron(e.cron), now) ?? null })), remove, now)
  }

  /** The bot's recurring events as getBot shows them (Botpress's Bot.recurringEvents). */
  async definitions(botId: string): Promise<Record<string, unknown>> {
    const rows = await this.store.recurringEvents.list(botId)
    return Object.fromEntries(rows.map((r) => [r.key, { type: r.type, payload: r.payload, schedule: { cron: r.cron }, failedAttempts: 0 }]))
  }

  /** Fires the occurrences that have come (run by the event dispatcher's poll); how many this instance fired. */
  async fireDue(): Promise<number> {
    const now = this.clock()
    let fired = 0
    for (const row of await this.store.recurringEvents.due(now, FIRE_BATCH)) {
      const cron = parseCron(row.cron)
      // The latest occurrence that has come (at least row.nextAt): the earlier ones missed while no instance ran are skipped.
      const occurrence = previousOccurrence(cron, now) ?? row.nextAt!
      const next = nextOccurrence(cron, now) ?? null
      const won = await this.store.recurringEvents.fire(row, occurrence, next, {
        id: uuidv7(), botId: row.botId, type: row.type, payload: row.payload, status: 'pending', dueAt: now, createdAt: now,
      })
      if (won) fired++
    }
    return fired
  }
}
