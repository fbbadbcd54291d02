import { sql, type Kysely, type Selectable, type Transaction } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type { JsonObject, Page, PageRequest } from '../store.js'
import type { NewWorkflow, WorkflowEvents, WorkflowFilter, WorkflowPatch, WorkflowRow, WorkflowStatus, WorkflowStore } from '../workflow-store.js'
import type { KyselyRuntimeEventStore } from './kysely-runtime-event-store.js'
import { ACTIVE_WORKFLOW_STATUSES, FINISHED_WORKFLOW_STATUSES } from '../workflow-store.js'

/** The tables of migrations/<dialect>/0007_runtime_state.sql (kept here so schema.ts stays untouched). */
interface WorkflowTables {
  runtime_workflows: {
    id: string
    bot_id: string
    name: string
    status: string
    input: string
    output: string
    parent_workflow_id: string | null
    conversation_id: string | null
    user_id: string | null
    event_id: string | null
    installation_id: string | null
    failure_reason: string | null
    tags: string
    timeout_at: number
    completed_at: number | null
    created_at: number
    updated_at: number
  }
  runtime_workflow_tags: { workflow_id: string; key: string; value: string }
}

type WorkflowRecord = Selectable<WorkflowTables['runtime_workflows']>
type Db = Kysely<WorkflowTables> | Transaction<WorkflowTables>

const toRow = (r: WorkflowRecord): WorkflowRow => ({
  id: r.id,
  botId: r.bot_id,
  name: r.name,
  status: r.status as WorkflowStatus,
  input: JSON.parse(r.input) as JsonObject,
  output: JSON.parse(r.output) as JsonObject,
  parentWorkflowId: r.parent_workflow_id,
  conversationId: r.conversation_id,
  userId: r.user_id,
  eventId: r.event_id,
  installationId: r.installation_id,
  failureReason: r.failure_reason,
  tags: JSON.parse(r.tags) as Record<string, string>,
  timeoutAt: Number(r.timeout_at),
  completedAt: r.completed_at === null ? null : Number(r.completed_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

export class KyselyWorkflowStore implements WorkflowStore {
  private readonly db: Kysely<WorkflowTables>

  constructor(db: Kysely<any>, private readonly dialect: 'sqlite' | 'postgres', private readonly runtimeEvents: KyselyRuntimeEventStore) {
    this.db = db as Kysely<WorkflowTables>
  }

  /** Queues the workflow_update events of a change in the transaction that makes it (src/domain/workflow-engine.ts). */
  private async queue(db: Db, events: WorkflowEvents | undefined, before: WorkflowRow | undefined, after: WorkflowRow | undefined): Promise<void> {
    for (const e of events?.(before, after) ?? []) await this.runtimeEvents.insertWith(db, e)
  }

  private async insert(db: Db, w: NewWorkflow): Promise<WorkflowRow> {
    const r = await db.insertInto('runtime_workflows').values({
      id: w.id, bot_id: w.botId, name: w.name, status: w.status, input: JSON.stringify(w.input), output: '{}',
      parent_workflow_id: w.parentWorkflowId, conversation_id: w.conversationId, user_id: w.userId, event_id: w.eventId, installation_id: w.installationId ?? null,
      failure_reason: null, tags: JSON.stringify(w.tags), timeout_at: w.timeoutAt,
      completed_at: FINISHED_WORKFLOW_STATUSES.includes(w.status) ? w.createdAt : null, created_at: w.createdAt, updated_at: w.createdAt,
    }).returningAll().executeTakeFirstOrThrow()
    const tags = Object.entries(w.tags)
    if (tags.length > 0) await db.insertInto('runtime_workflow_tags').values(tags.map(([key, value]) => ({ workflow_id: w.id, key, value }))).execute()
    return toRow(r)
  }

  create(w: NewWorkflow, events?: WorkflowEvents): Promise<WorkflowRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.insert(trx, w)
      await this.queue(trx, events, undefined, row)
      return row
    })
  }

  private filtered(db: Db, botId: string, filter: WorkflowFilter) {
    let q = db.selectFrom('runtime_workflows as w').selectAll('w').where('w.bot_id', '=', botId)
    if (filter.name !== undefined) q = q.where('w.name', '=', filter.name)
    if (filter.conversationId !== undefined) q = q.where('w.conversation_id', '=', filter.conversationId)
    if (filter.userId !== undefined) q = q.where('w.user_id', '=', filter.userId)
    if (filter.parentWorkflowId !== undefined) q = q.where('w.parent_workflow_id', '=', filter.parentWorkflowId)
    if (filter.installationId !== undefined) q = q.where('w.installation_id', '=', filter.installationId)
    if (filter.statuses !== undefined && filter.statuses.length > 0) q = q.where('w.status', 'in', filter.statuses)
    for (const [key, value] of Object.entries(filter.tags ?? {})) {
      q = q.where((eb) => eb.exists(eb.selectFrom('runtime_workflow_tags as t').select('t.workflow_id').whereRef('t.workflow_id', '=', 'w.id').where('t.key', '=', key).where('t.value', '=', value)))
    }
    return q
  }

  getOrCreate(w: NewWorkflow, match: WorkflowFilter, events?: WorkflowEvents): Promise<{ workflow: WorkflowRow; created: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      // One creator per (bot, name) at a time across instances; SQLite transactions are serial already.
      if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`parley-workflow:${w.botId}:${w.name}`}))`.execute(trx)
      const found = await this.filtered(trx, w.botId, match).orderBy('w.created_at', 'desc').orderBy('w.id', 'desc').limit(1).executeTakeFirst()
      if (found) return { workflow: toRow(found), created: false }
      const row = await this.insert(trx, w)
      await this.queue(trx, events, undefined, row)
      return { workflow: row, created: true }
    })
  }

  async get(botId: string, id: string): Promise<WorkflowRow | undefined> {
    const r = await this.db.selectFrom('runtime_workflows').selectAll().where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
    return r && toRow(r)
  }

  update(botId: string, id: string, patch: WorkflowPatch, now: number, events?: WorkflowEvents): Promise<WorkflowRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom('runtime_workflows').selectAll().where('bot_id', '=', botId).where('id', '=', id)
      if (this.dialect === 'postgres') q = q.forUpdate()
      const current = await q.executeTakeFirst()
      if (!current) return undefined
      const row = toRow(current)
      const tags = { ...row.tags }
      for (const [key, value] of Object.entries(patch.tags ?? {})) {
        if (value === null || value === '') {
          delete tags[key]
          await trx.deleteFrom('runtime_workflow_tags').where('workflow_id', '=', id).where('key', '=', key).execute()
        } else {
          tags[key] = value
          await trx.insertInto('runtime_workflow_tags').values({ workflow_id: id, key, value }).onConflict((oc) => oc.columns(['workflow_id', 'key']).doUpdateSet({ value })).execute()
        }
      }
      // A finished workflow keeps its status (a late update of its bot's, after the timeout sweep, changes nothing).
      const status = FINISHED_WORKFLOW_STATUSES.includes(row.status) ? row.status : patch.status ?? row.status
      const finished = FINISHED_WORKFLOW_STATUSES.includes(status)
      const r = await trx.updateTable('runtime_workflows').set({
        status,
        output: JSON.stringify(patch.output ?? row.output),
        timeout_at: patch.timeoutAt ?? row.timeoutAt,
        failure_reason: patch.failureReason ?? row.failureReason,
        user_id: patch.userId ?? row.userId,
        event_id: patch.eventId ?? row.eventId,
        tags: JSON.stringify(tags),
        completed_at: finished ? (row.completedAt ?? now) : null,
        updated_at: now,
      }).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
      const after = toRow(r)
      await this.queue(trx, events, row, after)
      return after
    })
  }

  delete(botId: string, id: string, events?: WorkflowEvents): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('runtime_workflows').where('bot_id', '=', botId).where('id', '=', id).returningAll().executeTakeFirst()
      if (!r) return false
      await this.queue(trx, events, toRow(r), undefined)
      return true
    })
  }

  timeOutDue(now: number, limit: number, events?: WorkflowEvents): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom('runtime_workflows').selectAll().where('status', 'in', [...ACTIVE_WORKFLOW_STATUSES]).where('timeout_at', '<=', now)
        .orderBy('timeout_at').limit(limit)
      // Another instance sweeping at the same time takes other rows (or none): each timeout is told once.
      if (this.dialect === 'postgres') q = q.forUpdate().skipLocked()
      const due = await q.execute()
      for (const r of due) {
        const updated = await trx.updateTable('runtime_workflows').set({ status: 'timedout', completed_at: now, updated_at: now })
          .where('id', '=', r.id).where('status', 'in', [...ACTIVE_WORKFLOW_STATUSES]).returningAll().executeTakeFirst()
        if (updated) await this.queue(trx, events, toRow(r), toRow(updated))
      }
      return due.length
    })
  }

  async list(botId: string, filter: WorkflowFilter, page: PageRequest): Promise<Page<WorkflowRow>> {
    let q = this.filtered(this.db, botId, filter)
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('w.created_at', '<', at), eb.and([eb('w.created_at', '=', at), eb('w.id', '<', id)])]))
    }
    const rows = await q.orderBy('w.created_at', 'desc').orderBy('w.id', 'desc').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map(toRow)
    const last = items.at(-1)
    return { items, ...(rows.length > page.limit && last && { next: encodeCursor([last.createdAt, last.id]) }) }
  }
}
