import type { Kysely, Selectable } from 'kysely'
import type { JsonObject } from '../store.js'
import type { NewRuntimeEvent } from '../runtime-event-store.js'
import type { RecurringEventInput, RecurringEventRow, RecurringEventStore } from '../recurring-event-store.js'
import type { KyselyRuntimeEventStore } from './kysely-runtime-event-store.js'

/** The table of migrations/<dialect>/0024_recurring_events.sql (kept here so schema.ts stays untouched). */
interface RecurringTables {
  runtime_recurring_events: {
    bot_id: string
    key: string
    type: string
    payload: string
    cron: string
    next_at: number | null
    last_fired_at: number | null
    created_at: number
    updated_at: number
  }
}

const num = (v: number | string | null) => (v === null ? null : Number(v))

const toRow = (r: Selectable<RecurringTables['runtime_recurring_events']>): RecurringEventRow => ({
  botId: r.bot_id,
  key: r.key,
  type: r.type,
  payload: JSON.parse(r.payload) as JsonObject,
  cron: r.cron,
  nextAt: num(r.next_at),
  lastFiredAt: num(r.last_fired_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

export class KyselyRecurringEventStore implements RecurringEventStore {
  private readonly db: Kysely<RecurringTables>

  constructor(db: Kysely<any>, private readonly events: KyselyRuntimeEventStore) {
    this.db = db as Kysely<RecurringTables>
  }

  async list(botId: string): Promise<RecurringEventRow[]> {
    return (await this.db.selectFrom('runtime_recurring_events').selectAll().where('bot_id', '=', botId).orderBy('key').execute()).map(toRow)
  }

  declare(botId: string, put: RecurringEventInput[], remove: string[], now: number): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      if (remove.length > 0) await trx.deleteFrom('runtime_recurring_events').where('bot_id', '=', botId).where('key', 'in', remove).execute()
      for (const e of put) {
        await trx.insertInto('runtime_recurring_events').values({
          bot_id: botId, key: e.key, type: e.type, payload: JSON.stringify(e.payload), cron: e.cron, next_at: e.nextAt, last_fired_at: null, created_at: now, updated_at: now,
        }).onConflict((oc) => oc.columns(['bot_id', 'key']).doUpdateSet((eb) => ({
          type: eb.ref('excluded.type'),
          payload: eb.ref('excluded.payload'),
          // An unchanged schedule keeps its next occurrence (a redeploy neither skips nor repeats one).
          next_at: eb.case().when('runtime_recurring_events.cron', '=', eb.ref('excluded.cron')).then(eb.ref('runtime_recurring_events.next_at')).else(eb.ref('excluded.next_at')).end(),
          cron: eb.ref('excluded.cron'),
          updated_at: eb.ref('excluded.updated_at'),
        }))).execute()
      }
    })
  }

  async due(now: number, limit: number): Promise<RecurringEventRow[]> {
    return (await this.db.selectFrom('runtime_recurring_events').selectAll().where('next_at', '<=', now).orderBy('next_at').limit(limit).execute()).map(toRow)
  }

  fire(row: RecurringEventRow, occurrence: number, nextAt: number | null, event: NewRuntimeEvent): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('runtime_recurring_events').set({ next_at: nextAt, last_fired_at: occurrence })
        .where('bot_id', '=', row.botId).where('key', '=', row.key).where('next_at', '=', row.nextAt).where('cron', '=', row.cron)
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) !== 1) return false
      await this.events.insertWith(trx, event)
      return true
    })
  }
}
