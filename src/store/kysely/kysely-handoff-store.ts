import type { Kysely, Selectable } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type { ClaimResult, HandoffNoteRow, HandoffRow, HandoffStatus, HandoffStore, HandoffTiming, NewHandoff } from '../handoff-store.js'
import type { Page, PageRequest } from '../store.js'

/** The tables of migrations/<dialect>/0013_handoffs.sql (kept here so schema.ts stays untouched). */
interface HandoffTables {
  handoffs: {
    id: string
    bot_id: string
    integration_id: string
    conversation_id: string
    user_id: string
    status: string
    reason: string | null
    requested_at: number
    claimed_by: string | null
    claimed_name: string | null
    claimed_at: number | null
    ended_at: number | null
  }
  handoff_notes: { id: string; handoff_id: string; member_id: string; text: string; created_at: number }
}

type Record = Selectable<HandoffTables['handoffs']>

const num = (v: number | null) => (v === null ? null : Number(v))

// PostgreSQL BIGINT columns come back as strings: Number() for both engines.
const toRow = (r: Record): HandoffRow => ({
  id: r.id,
  botId: r.bot_id,
  integrationId: r.integration_id,
  conversationId: r.conversation_id,
  userId: r.user_id,
  status: r.status as HandoffStatus,
  reason: r.reason,
  requestedAt: Number(r.requested_at),
  claimedBy: r.claimed_by,
  claimedName: r.claimed_name,
  claimedAt: num(r.claimed_at),
  endedAt: num(r.ended_at),
})

const toNote = (r: Selectable<HandoffTables['handoff_notes']>): HandoffNoteRow => ({
  id: r.id, handoffId: r.handoff_id, memberId: r.member_id, text: r.text, createdAt: Number(r.created_at),
})

/** Portable SQL only (ON CONFLICT DO NOTHING, UPDATE … RETURNING). */
export class KyselyHandoffStore implements HandoffStore {
  private readonly db: Kysely<HandoffTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<HandoffTables>
  }

  async open(h: NewHandoff): Promise<{ handoff: HandoffRow; created: boolean }> {
    // Twice at most: the open handoff that made the insert conflict may end before it is read.
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await this.db.insertInto('handoffs')
        .values({
          id: h.id, bot_id: h.botId, integration_id: h.integrationId, conversation_id: h.conversationId, user_id: h.userId,
          status: 'waiting', reason: h.reason, requested_at: h.requestedAt, claimed_by: null, claimed_name: null, claimed_at: null, ended_at: null,
        })
        // The partial unique index (one open handoff per conversation) is the only possible conflict.
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        .executeTakeFirst()
      if (inserted) return { handoff: toRow(inserted), created: true }
      const existing = await this.getOpen(h.integrationId, h.conversationId)
      if (existing) return { handoff: existing, created: false }
    }
    throw new Error(`Could not open a handoff for conversation ${h.conversationId}: it kept changing`)
  }

  async getOpen(integrationId: string, conversationId: string): Promise<HandoffRow | undefined> {
    const r = await this.db.selectFrom('handoffs').selectAll()
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('status', '<>', 'ended')
      .executeTakeFirst()
    return r && toRow(r)
  }

  async coveredAt(integrationId: string, conversationId: string, at: number): Promise<boolean> {
    const r = await this.db.selectFrom('handoffs').select('id')
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('requested_at', '<=', at)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', at)]))
      .limit(1)
      .executeTakeFirst()
    return r !== undefined
  }

  async latest(botId: string, conversationId: string): Promise<HandoffRow | undefined> {
    const r = await this.db.selectFrom('handoffs').selectAll()
      .where('bot_id', '=', botId).where('conversation_id', '=', conversationId)
      // Open first (there is at most one), then the latest request.
      .orderBy((eb) => eb.case().when('status', '=', 'ended').then(1).else(0).end())
      .orderBy('requested_at', 'desc').orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
    return r && toRow(r)
  }

  async list(botId: string, status: HandoffStatus | undefined, page: PageRequest): Promise<Page<HandoffRow>> {
    let q = this.db.selectFrom('handoffs').selectAll().where('bot_id', '=', botId)
    if (status) q = q.where('status', '=', status)
    if (page.after) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('requested_at', '>', at), eb.and([eb('requested_at', '=', at), eb('id', '>', id)])]))
    }
    const rows = await q.orderBy('requested_at').orderBy('id').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map(toRow)
    const last = items[items.length - 1]
    return { items, ...(rows.length > page.limit && last && { next: encodeCursor([last.requestedAt, last.id]) }) }
  }

  async claim(id: string, memberId: string, memberName: string, now: number): Promise<ClaimResult> {
    // The one write that decides: only a free open handoff is claimed. On PostgreSQL a concurrent
    // claimer waits for the row lock, re-checks `claimed_by IS NULL` against the committed row and updates nothing.
    const claimed = await this.db.updateTable('handoffs')
      .set({ status: 'active', claimed_by: memberId, claimed_name: memberName, claimed_at: now })
      .where('id', '=', id).where('status', '<>', 'ended').where('claimed_by', 'is', null)
      .returningAll()
      .executeTakeFirst()
    if (claimed) return { outcome: 'claimed', handoff: toRow(claimed) }
    const r = await this.db.selectFrom('handoffs').selectAll().where('id', '=', id).executeTakeFirst()
    if (!r || r.status === 'ended') return { outcome: 'closed' }
    const row = toRow(r)
    return row.claimedBy === memberId ? { outcome: 'claimed', handoff: row } : { outcome: 'taken', handoff: row }
  }

  async end(id: string, now: number): Promise<HandoffRow | undefined> {
    const r = await this.db.updateTable('handoffs').set({ status: 'ended', ended_at: now })
      .where('id', '=', id).where('status', '<>', 'ended')
      .returningAll()
      .executeTakeFirst()
    return r && toRow(r)
  }

  async addNote(note: HandoffNoteRow): Promise<void> {
    await this.db.insertInto('handoff_notes')
      .values({ id: note.id, handoff_id: note.handoffId, member_id: note.memberId, text: note.text, created_at: note.createdAt })
      .execute()
  }

  async notes(handoffId: string, limit: number): Promise<HandoffNoteRow[]> {
    const rows = await this.db.selectFrom('handoff_notes').selectAll().where('handoff_id', '=', handoffId)
      .orderBy('created_at').orderBy('id').limit(limit).execute()
    return rows.map(toNote)
  }

  async notesOf(handoffIds: string[], limitEach: number): Promise<Map<string, HandoffNoteRow[]>> {
    const out = new Map<string, HandoffNoteRow[]>()
    if (handoffIds.length === 0) return out
    const rows = await this.db.selectFrom('handoff_notes').selectAll().where('handoff_id', 'in', handoffIds)
      .orderBy('created_at').orderBy('id').execute()
    for (const r of rows) {
      const list = out.get(r.handoff_id) ?? []
      if (list.length < limitEach) list.push(toNote(r))
      out.set(r.handoff_id, list)
    }
    return out
  }

  async timings(botId: string, from: number, to: number): Promise<HandoffTiming[]> {
    const rows = await this.db.selectFrom('handoffs').select(['requested_at', 'claimed_at', 'ended_at'])
      .where('bot_id', '=', botId).where('requested_at', '>=', from).where('requested_at', '<', to)
      .execute()
    return rows.map((r) => ({ requestedAt: Number(r.requested_at), claimedAt: num(r.claimed_at), endedAt: num(r.ended_at) }))
  }
}
