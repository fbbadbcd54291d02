import { sql, type Kysely, type Selectable, type Transaction } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type { NewRuntimeEvent, RuntimeEventFilter, RuntimeEventOutcome, RuntimeEventRow, RuntimeEventStatus, RuntimeEventStore } from '../runtime-event-store.js'
import type { JsonObject, Page, PageRequest } from '../store.js'

/** The table of migrations/<dialect>/0007_runtime_state.sql (kept here so schema.ts stays untouched). */
export interface RuntimeEventTables {
  conversations: { integration_id: string; id: string; bot_seq: number }
  events: { id: string; integration_id: string; conversation_id: string; seq: number; user_id: string; is_bot: number; payload: string; bot_skip: number; created_at: number }
  runtime_events: {
    id: string
    bot_id: string
    type: string
    payload: string
    conversation_id: string | null
    user_id: string | null
    message_id: string | null
    workflow_id: string | null
    status: string
    failure_reason: string | null
    due_at: number
    attempts: number
    lease_owner: string | null
    lease_until: number
    conversation_seq: number | null
    integration_id: string | null
    installation_id: string | null
    created_at: number
    processed_at: number | null
  }
}

type Record = Selectable<RuntimeEventTables['runtime_events']> & { effective_status: string }
type Db = Kysely<RuntimeEventTables> | Transaction<RuntimeEventTables>

const toRow = (r: Record): RuntimeEventRow => ({
  id: r.id,
  botId: r.bot_id,
  type: r.type,
  payload: JSON.parse(r.payload) as JsonObject,
  conversationId: r.conversation_id,
  userId: r.user_id,
  messageId: r.message_id,
  workflowId: r.workflow_id,
  status: r.effective_status as RuntimeEventStatus,
  failureReason: r.failure_reason,
  dueAt: Number(r.due_at),
  attempts: Number(r.attempts),
  leaseOwner: r.lease_owner,
  leaseUntil: Number(r.lease_until),
  conversationSeq: r.conversation_seq === null ? null : Number(r.conversation_seq),
  integrationId: r.integration_id,
  installationId: r.installation_id,
  createdAt: Number(r.created_at),
  processedAt: r.processed_at === null ? null : Number(r.processed_at),
})

const WAITING = ['scheduled', 'pending']

/**
 * The status as callers see it: an event appended to a conversation's log is `processed` once the
 * bot's cursor there has passed it (the runtime moves the cursor when the event's turn ends).
 */
const effectiveStatus = sql<string>`CASE WHEN ${sql.ref('e.status')} = 'pending' AND ${sql.ref('e.conversation_seq')} IS NOT NULL AND ${sql.ref('e.conversation_seq')} <= coalesce((SELECT ${sql.ref('c.bot_seq')} FROM ${sql.table('conversations')} AS c WHERE ${sql.ref('c.integration_id')} = ${sql.ref('e.integration_id')} AND ${sql.ref('c.id')} = ${sql.ref('e.conversation_id')}), -1) THEN 'processed' ELSE ${sql.ref('e.status')} END`

/** Portable SQL only; claims as in KyselyWebhookStore (UPDATE … WHERE id = (sub-select) with the conditions repeated). */
export class KyselyRuntimeEventStore implements RuntimeEventStore {
  private readonly db: Kysely<RuntimeEventTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<RuntimeEventTables>
  }

  /** Inserts with `db` (a transaction of another store part: the state sweep queues state_expired events in its own). */
  async insertWith(db: Kysely<any> | Transaction<any>, e: NewRuntimeEvent): Promise<RuntimeEventRow> {
    const r = await (db as Db).insertInto('runtime_events').values({
      id: e.id, bot_id: e.botId, type: e.type, payload: JSON.stringify(e.payload),
      conversation_id: e.conversationId ?? null, user_id: e.userId ?? null, message_id: e.messageId ?? null, workflow_id: e.workflowId ?? null,
      status: e.status, failure_reason: null, due_at: e.dueAt, attempts: e.lease ? 1 : 0,
      lease_owner: e.lease?.owner ?? null, lease_until: e.lease?.until ?? 0, conversation_seq: null, integration_id: null, installation_id: e.installationId ?? null, created_at: e.createdAt, processed_at: null,
    }).returningAll().executeTakeFirstOrThrow()
    return toRow({ ...r, effective_status: r.status })
  }

  insert(e: NewRuntimeEvent): Promise<RuntimeEventRow> {
    return this.insertWith(this.db, e)
  }

  async get(botId: string, id: string): Promise<RuntimeEventRow | undefined> {
    const r = await this.db.selectFrom('runtime_events as e').selectAll('e').select(effectiveStatus.as('effective_status'))
      .where('e.bot_id', '=', botId).where('e.id', '=', id).executeTakeFirst()
    return r && toRow(r)
  }

  async list(botId: string, filter: RuntimeEventFilter, page: PageRequest): Promise<Page<RuntimeEventRow>> {
    let q = this.db.selectFrom('runtime_events as e').selectAll('e').select(effectiveStatus.as('effective_status')).where('e.bot_id', '=', botId)
    if (filter.type !== undefined) q = q.where('e.type', '=', filter.type)
    if (filter.conversationId !== undefined) q = q.where('e.conversation_id', '=', filter.conversationId)
    if (filter.userId !== undefined) q = q.where('e.user_id', '=', filter.userId)
    if (filter.messageId !== undefined) q = q.where('e.message_id', '=', filter.messageId)
    if (filter.workflowId !== undefined) q = q.where('e.workflow_id', '=', filter.workflowId)
    if (filter.status !== undefined) q = q.where(effectiveStatus, '=', filter.status)
    if (filter.installationId !== undefined) q = q.where('e.installation_id', '=', filter.installationId)
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('e.created_at', '<', at), eb.and([eb('e.created_at', '=', at), eb('e.id', '<', id)])]))
    }
    const rows = await q.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map(toRow)
    const last = items.at(-1)
    return { items, ...(rows.length > page.limit && last && { next: encodeCursor([last.createdAt, last.id]) }) }
  }

  async listChatEvents(botId: string, integrationIds: string[], filter: RuntimeEventFilter, page: PageRequest): Promise<Page<RuntimeEventRow>> {
    const impossible = integrationIds.length === 0 || (filter.type !== undefined && filter.type !== 'custom') || filter.messageId !== undefined
      || filter.workflowId !== undefined || (filter.status !== undefined && !['pending', 'processed', 'ignored'].includes(filter.status))
    if (impossible) return { items: [] }
    const status = sql<string>`CASE WHEN ${sql.ref('ev.bot_skip')} = 1 THEN 'ignored' WHEN ${sql.ref('ev.is_bot')} = 1 OR ${sql.ref('ev.seq')} <= ${sql.ref('c.bot_seq')} THEN 'processed' ELSE 'pending' END`
    let q = this.db.selectFrom('events as ev')
      .innerJoin('conversations as c', (j) => j.onRef('c.integration_id', '=', 'ev.integration_id').onRef('c.id', '=', 'ev.conversation_id'))
      .select(['ev.id', 'ev.integration_id', 'ev.conversation_id', 'ev.user_id', 'ev.payload', 'ev.seq', 'ev.created_at']).select(status.as('status'))
      .where('ev.integration_id', 'in', integrationIds)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('runtime_events as r').select('r.id').whereRef('r.id', '=', 'ev.id'))))
    if (filter.conversationId !== undefined) q = q.where('ev.conversation_id', '=', filter.conversationId)
    if (filter.userId !== undefined) q = q.where('ev.user_id', '=', filter.userId)
    if (filter.status !== undefined) q = q.where(status, '=', filter.status)
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('ev.created_at', '<', at), eb.and([eb('ev.created_at', '=', at), eb('ev.id', '<', id)])]))
    }
    const rows = await q.orderBy('ev.created_at', 'desc').orderBy('ev.id', 'desc').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map((r): RuntimeEventRow => ({
      id: r.id, botId, type: 'custom', payload: JSON.parse(r.payload) as JsonObject, conversationId: r.conversation_id, userId: r.user_id,
      messageId: null, workflowId: null, status: r.status as RuntimeEventStatus, failureReason: null, dueAt: Number(r.created_at), attempts: 0,
      leaseOwner: null, leaseUntil: 0, conversationSeq: Number(r.seq), integrationId: r.integration_id, installationId: null, createdAt: Number(r.created_at), processedAt: null,
    }))
    const last = items.at(-1)
    return { items, ...(rows.length > page.limit && last && { next: encodeCursor([last.createdAt, last.id]) }) }
  }

  async cancel(botId: string, id: string, now: number): Promise<boolean | undefined> {
    const r = await this.db.updateTable('runtime_events').set({ status: 'canceled', processed_at: now, lease_owner: null })
      .where('bot_id', '=', botId).where('id', '=', id).where('status', '=', 'scheduled').executeTakeFirst()
    if (Number(r.numUpdatedRows) === 1) return true
    return (await this.get(botId, id)) ? false : undefined
  }

  async claimDue(owner: string, now: number, leaseMs: number): Promise<RuntimeEventRow | undefined> {
    const r = await this.db
      .updateTable('runtime_events')
      .set((eb) => ({ lease_owner: owner, lease_until: now + leaseMs, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', (eb) =>
        eb.selectFrom('runtime_events').select('id')
          .where('status', 'in', WAITING).where('due_at', '<=', now).where('lease_until', '<=', now).where('conversation_seq', 'is', null)
          .orderBy('due_at').orderBy('id').limit(1))
      .where('status', 'in', WAITING).where('due_at', '<=', now).where('lease_until', '<=', now).where('conversation_seq', 'is', null)
      .returningAll()
      .executeTakeFirst()
    return r && toRow({ ...r, effective_status: r.status })
  }

  async finish(id: string, owner: string, outcome: RuntimeEventOutcome, now: number, next: NewRuntimeEvent[] = []): Promise<boolean> {
    const set = outcome.status === 'pending'
      ? { status: 'pending', conversation_seq: outcome.conversationSeq, integration_id: outcome.integrationId, lease_owner: null, lease_until: 0 }
      : { status: outcome.status, failure_reason: outcome.failureReason ?? null, processed_at: now, lease_owner: null, lease_until: 0 }
    const end = async (db: Db) => {
      const r = await db.updateTable('runtime_events').set(set)
        .where('id', '=', id).where('lease_owner', '=', owner).where('status', 'in', WAITING).executeTakeFirst()
      return Number(r.numUpdatedRows) === 1
    }
    if (next.length === 0) return end(this.db)
    // The events that follow this one (a workflow's next update) are queued only by the instance that ends it.
    return this.db.transaction().execute(async (trx) => {
      if (!(await end(trx))) return false
      for (const e of next) await this.insertWith(trx, e)
      return true
    })
  }

  async extendLease(id: string, owner: string, until: number): Promise<void> {
    await this.db.updateTable('runtime_events').set({ lease_until: until })
      .where('id', '=', id).where('lease_owner', '=', owner).where('status', 'in', WAITING).execute()
  }

  async release(id: string, owner: string): Promise<void> {
    await this.db.updateTable('runtime_events').set({ lease_owner: null, lease_until: 0 })
      .where('id', '=', id).where('lease_owner', '=', owner).where('status', 'in', WAITING).execute()
  }
}
