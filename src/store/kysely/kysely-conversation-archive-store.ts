import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type { ArchiveConversation, ArchiveFilter, ConversationArchiveStore } from '../conversation-archive-store.js'
import type { MessageRow, Page, PageRequest } from '../store.js'
import type { Database } from './schema.js'
import { toMessage } from './rows.js'

type Eb = ExpressionBuilder<Database & { c: Database['conversations'] }, 'c'>

/** `%q%` for LIKE with \ as the escape character. */
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

function pageOf<T>(rows: T[], limit: number, cursorOf: (last: T) => (string | number)[]): Page<T> {
  if (rows.length <= limit) return { items: rows, next: undefined }
  const items = rows.slice(0, limit)
  return { items, next: encodeCursor(cursorOf(items[items.length - 1]!)) }
}

/** Portable SQL only: lower() LIKE … ESCAPE, EXISTS sub-selects. */
export class KyselyConversationArchiveStore implements ConversationArchiveStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The WHERE of a filter over `conversations as c`. */
  private matching(f: ArchiveFilter) {
    return (eb: Eb) => {
      const all = [f.integrationIds.length > 0 ? eb('c.integration_id', 'in', f.integrationIds) : eb.val(false)]
      if (f.conversationId !== undefined) all.push(eb('c.id', '=', f.conversationId))
      if (f.from !== undefined) all.push(eb('c.last_at', '>=', f.from))
      if (f.to !== undefined) all.push(eb('c.created_at', '<=', f.to))
      if (f.failed) {
        all.push(eb.exists(eb.selectFrom('bot_logs as l').select('l.id')
          .where('l.bot_id', '=', f.botId).whereRef('l.conversation_id', '=', 'c.id').where('l.level', '=', 'error')))
      }
      if (f.handoff) {
        // handoffs is its own repository's table (migrations/<dialect>/0013_handoffs.sql; index handoffs_conversation)
        all.push(eb.exists(sql`(select 1 from handoffs h where h.integration_id = c.integration_id and h.conversation_id = c.id)`))
      }
      if (f.q !== undefined && f.q !== '') {
        const q = f.q
        const pattern = likePattern(q)
        all.push(eb.or([
          eb('c.owner_id', '=', q),
          eb.exists(eb.selectFrom('participants as p').select('p.user_id')
            .whereRef('p.integration_id', '=', 'c.integration_id').whereRef('p.conversation_id', '=', 'c.id').where('p.user_id', '=', q)),
          eb.exists(eb.selectFrom('conversation_tags as t').select('t.key')
            .whereRef('t.integration_id', '=', 'c.integration_id').whereRef('t.conversation_id', '=', 'c.id').where('t.value', '=', q)),
          eb.exists(eb.selectFrom('messages as m').select('m.id')
            .whereRef('m.integration_id', '=', 'c.integration_id').whereRef('m.conversation_id', '=', 'c.id')
            .where(sql<boolean>`lower(m.payload) like ${pattern} escape '\\'`)),
          eb.exists(eb.selectFrom('messages as m2').innerJoin('message_tags as mt', 'mt.message_id', 'm2.id').select('m2.id')
            .whereRef('m2.integration_id', '=', 'c.integration_id').whereRef('m2.conversation_id', '=', 'c.id').where('mt.value', '=', q)),
        ]))
      }
      return eb.and(all)
    }
  }

  async searchConversations(f: ArchiveFilter, page: PageRequest): Promise<Page<ArchiveConversation>> {
    let q = this.db.selectFrom('conversations as c').where(this.matching(f))
      .select((eb) => ['c.integration_id', 'c.id', 'c.owner_id', 'c.created_at', 'c.last_at',
        eb.selectFrom('messages as n').select(eb.fn.countAll().as('n'))
          .whereRef('n.integration_id', '=', 'c.integration_id').whereRef('n.conversation_id', '=', 'c.id').as('message_count')])
    if (page.after !== undefined) {
      const [at, id, integrationId] = decodeCursor(page.after, ['number', 'string', 'string']) as [number, string, string]
      q = q.where((eb) => eb.or([
        eb('c.last_at', '<', at),
        eb.and([eb('c.last_at', '=', at), eb('c.id', '<', id)]),
        eb.and([eb('c.last_at', '=', at), eb('c.id', '=', id), eb('c.integration_id', '<', integrationId)]),
      ]))
    }
    const rows = await q.orderBy('c.last_at', 'desc').orderBy('c.id', 'desc').orderBy('c.integration_id', 'desc').limit(page.limit + 1).execute()
    const p = pageOf(rows, page.limit, (r) => [Number(r.last_at), r.id, r.integration_id])
    const ids = p.items.map((r) => r.id)
    const tags = new Map<string, Record<string, string>>()
    const key = (integrationId: string, id: string) => `${integrationId}\n${id}`
    if (ids.length > 0) {
      const tagRows = await this.db.selectFrom('conversation_tags').select(['integration_id', 'conversation_id', 'key', 'value'])
        .where('integration_id', 'in', [...new Set(p.items.map((r) => r.integration_id))]).where('conversation_id', 'in', ids).execute()
      for (const t of tagRows) tags.set(key(t.integration_id, t.conversation_id), { ...tags.get(key(t.integration_id, t.conversation_id)), [t.key]: t.value })
    }
    return {
      items: p.items.map((r) => ({
        integrationId: r.integration_id, id: r.id, ownerId: r.owner_id === '' ? null : r.owner_id, createdAt: Number(r.created_at), lastAt: Number(r.last_at),
        messageCount: Number(r.message_count ?? 0), tags: tags.get(key(r.integration_id, r.id)) ?? {},
      })),
      next: p.next,
    }
  }

  async exportMessages(f: ArchiveFilter, page: PageRequest): Promise<Page<MessageRow>> {
    let q = this.db.selectFrom('messages as mm').selectAll('mm')
      .where((eb) => f.integrationIds.length > 0 ? eb('mm.integration_id', 'in', f.integrationIds) : eb.val(false))
      .where((eb) => eb.exists(eb.selectFrom('conversations as c').select('c.id')
        .whereRef('c.integration_id', '=', 'mm.integration_id').whereRef('c.id', '=', 'mm.conversation_id').where(this.matching(f) as never)))
    if (f.conversationId !== undefined) q = q.where('mm.conversation_id', '=', f.conversationId)
    if (page.after !== undefined) {
      const [conversationId, integrationId, seq] = decodeCursor(page.after, ['string', 'string', 'number']) as [string, string, number]
      q = q.where((eb) => eb.or([
        eb('mm.conversation_id', '>', conversationId),
        eb.and([eb('mm.conversation_id', '=', conversationId), eb('mm.integration_id', '>', integrationId)]),
        eb.and([eb('mm.conversation_id', '=', conversationId), eb('mm.integration_id', '=', integrationId), eb('mm.seq', '>', seq)]),
      ]))
    }
    const rows = await q.orderBy('mm.conversation_id').orderBy('mm.integration_id').orderBy('mm.seq').limit(page.limit + 1).execute()
    const p = pageOf(rows.map(toMessage), page.limit, (m) => [m.conversationId, m.integrationId, m.seq])
    return p
  }
}
