import type { Kysely, Selectable, Transaction } from 'kysely'
import type { ExpiredEvent, RuntimeStateRow, StateDefinitionsRow, StateKey, StateStore, StateType, StateWrite } from '../state-store.js'
import type { JsonObject } from '../store.js'
import type { KyselyRuntimeEventStore } from './kysely-runtime-event-store.js'

/** The tables of migrations/<dialect>/0007_runtime_state.sql (kept here so schema.ts stays untouched). */
interface StateTables {
  runtime_state_definitions: { bot_id: string; definitions: string; version: number; updated_at: number }
  runtime_states: {
    bot_id: string
    type: string
    resource_id: string
    name: string
    id: string
    payload: string
    expiry: number | null
    expires_at: number | null
    created_at: number
    updated_at: number
  }
}

type Record = Selectable<StateTables['runtime_states']>
type Trx = Transaction<StateTables>

const toRow = (r: Record): RuntimeStateRow => ({
  botId: r.bot_id,
  type: r.type as StateType,
  resourceId: r.resource_id,
  name: r.name,
  id: r.id,
  payload: JSON.parse(r.payload) as JsonObject,
  expiry: r.expiry === null ? null : Number(r.expiry),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

const isExpired = (r: RuntimeStateRow, now: number) => r.expiresAt !== null && r.expiresAt <= now

/** A concurrent writer created the same state between our read and our insert: the transaction runs again. */
class Retry extends Error {}

export class KyselyStateStore implements StateStore {
  private readonly db: Kysely<StateTables>

  constructor(db: Kysely<any>, private readonly dialect: 'sqlite' | 'postgres', private readonly events: KyselyRuntimeEventStore) {
    this.db = db as Kysely<StateTables>
  }

  async getDefinitions(botId: string): Promise<StateDefinitionsRow | undefined> {
    const r = await this.db.selectFrom('runtime_state_definitions').selectAll().where('bot_id', '=', botId).executeTakeFirst()
    return r && { botId: r.bot_id, definitions: JSON.parse(r.definitions) as JsonObject, version: Number(r.version), updatedAt: Number(r.updated_at) }
  }

  async setDefinitions(botId: string, definitions: JsonObject, now: number): Promise<StateDefinitionsRow> {
    const text = JSON.stringify(definitions)
    const r = await this.db.insertInto('runtime_state_definitions')
      .values({ bot_id: botId, definitions: text, version: 1, updated_at: now })
      .onConflict((oc) => oc.column('bot_id').doUpdateSet((eb) => ({ definitions: text, version: eb('runtime_state_definitions.version', '+', 1), updated_at: now })))
      .returningAll().executeTakeFirstOrThrow()
    return { botId, definitions, version: Number(r.version), updatedAt: Number(r.updated_at) }
  }

  private whereKey(key: StateKey) {
    return { bot_id: key.botId, type: key.type, resource_id: key.resourceId, name: key.name }
  }

  private async select(db: Kysely<StateTables> | Trx, key: StateKey, lock: boolean): Promise<RuntimeStateRow | undefined> {
    const k = this.whereKey(key)
    let q = db.selectFrom('runtime_states').selectAll()
      .where('bot_id', '=', k.bot_id).where('type', '=', k.type).where('resource_id', '=', k.resource_id).where('name', '=', k.name)
    if (lock && this.dialect === 'postgres') q = q.forUpdate()
    const r = await q.executeTakeFirst()
    return r && toRow(r)
  }

  /** Removes an expired state and queues its event, in `trx`. */
  private async expire(trx: Trx, state: RuntimeStateRow, expired: ExpiredEvent): Promise<void> {
    await trx.deleteFrom('runtime_states').where('id', '=', state.id).execute()
    await this.events.insertWith(trx, expired(state))
  }

  private async transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.transaction().execute(fn)
      } catch (err) {
        if (!(err instanceof Retry) || attempt >= 4) throw err
      }
    }
  }

  async get(key: StateKey, now: number): Promise<RuntimeStateRow | undefined> {
    const state = await this.select(this.db, key, false)
    return state && !isExpired(state, now) ? state : undefined
  }

  write(key: StateKey, w: StateWrite, expired: ExpiredEvent): Promise<{ state: RuntimeStateRow; created: boolean } | undefined> {
    return this.transaction(async (trx) => {
      let existing = await this.select(trx, key, true)
      if (existing && isExpired(existing, w.now)) {
        await this.expire(trx, existing, expired)
        existing = undefined
      }
      if (!existing && w.mode === 'patch') return undefined
      if (existing && w.mode === 'getOrSet') return { state: existing, created: false }
      const expiry = w.expiry !== undefined ? w.expiry : existing ? existing.expiry : w.defaultExpiry
      const expiresAt = expiry === null ? null : w.now + expiry
      if (existing) {
        const payload = w.mode === 'patch' ? { ...existing.payload, ...w.payload } : w.payload
        const r = await trx.updateTable('runtime_states')
          .set({ payload: JSON.stringify(payload), expiry, expires_at: expiresAt, updated_at: w.now })
          .where('id', '=', existing.id).returningAll().executeTakeFirstOrThrow()
        return { state: toRow(r), created: false }
      }
      const r = await trx.insertInto('runtime_states')
        .values({ ...this.whereKey(key), id: w.id, payload: JSON.stringify(w.payload), expiry, expires_at: expiresAt, created_at: w.now, updated_at: w.now })
        .onConflict((oc) => oc.columns(['bot_id', 'type', 'resource_id', 'name']).doNothing())
        .returningAll().executeTakeFirst()
      if (!r) throw new Retry()
      return { state: toRow(r), created: true }
    })
  }

  delete(key: StateKey, now: number, expired: ExpiredEvent): Promise<boolean> {
    return this.transaction(async (trx) => {
      const existing = await this.select(trx, key, true)
      if (!existing) return false
      if (isExpired(existing, now)) {
        await this.expire(trx, existing, expired)
        return false
      }
      await trx.deleteFrom('runtime_states').where('id', '=', existing.id).execute()
      return true
    })
  }

  async setExpiry(key: StateKey, expiry: number | null, now: number): Promise<RuntimeStateRow | undefined> {
    const k = this.whereKey(key)
    const r = await this.db.updateTable('runtime_states')
      .set({ expiry, expires_at: expiry === null ? null : now + expiry })
      .where('bot_id', '=', k.bot_id).where('type', '=', k.type).where('resource_id', '=', k.resource_id).where('name', '=', k.name)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .returningAll().executeTakeFirst()
    return r && toRow(r)
  }

  expireDue(now: number, limit: number, expired: ExpiredEvent): Promise<RuntimeStateRow[]> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom('runtime_states').selectAll().where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
      // Another instance sweeping at the same time takes other rows (or none): each expiry is queued once.
      if (this.dialect === 'postgres') q = q.forUpdate().skipLocked()
      const rows = (await q.execute()).map(toRow)
      for (const state of rows) await this.expire(trx, state, expired)
      return rows
    })
  }
}
