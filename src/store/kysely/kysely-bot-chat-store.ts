import { sql, type ExpressionBuilder, type Kysely, type RawBuilder, type Selectable, type SqlBool, type Transaction } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import { keysetAcross } from './keyset-across.js'
import { UniqueViolation, type Page, type PageRequest } from '../store.js'
import type {
  BotChatConversation, BotChatConversationPatch, BotChatMessage, BotChatMessagePatch, BotChatStore, BotChatUser, BotChatUserPatch,
  ConversationFilter, MessageFilter, NewBotChatConversation, NewBotChatUser, TagKind, TagPatch, Tags, UserFilter,
} from '../bot-chat-store.js'
import type { Database } from './schema.js'
import { NO_OWNER, ownerOf, toMessage } from './rows.js'

type Db = Kysely<Database> | Transaction<Database>
type UserSel = Selectable<Database['users']>
type ConversationSel = Selectable<Database['conversations']> & { message_count: number | string | bigint | null }
type MessageSel = Selectable<Database['messages']>

const tagKey = (integrationId: string, id: string) => `${integrationId}\n${id}`
const parseMap = (text: string | null): Tags | null => (text === null ? null : (JSON.parse(text) as Tags))

/** A string map with `patch` applied (null or '' removes a key); null when nothing is left. */
function patchMap(current: Tags | null, patch: TagPatch | undefined): Tags | null {
  if (patch === undefined) return current
  const next: Tags = { ...(current ?? {}) }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === '') delete next[k]
    else next[k] = v
  }
  return Object.keys(next).length === 0 ? null : next
}

const TAG_TABLES = {
  user: { table: 'user_tags', id: 'user_id' },
  conversation: { table: 'conversation_tags', id: 'conversation_id' },
  message: { table: 'message_tags', id: 'message_id' },
} as const

function pageOf<T>(rows: T[], limit: number, cursorOf: (last: T) => (string | number)[]): Page<T> {
  if (rows.length <= limit) return { items: rows }
  const items = rows.slice(0, limit)
  return { items, next: encodeCursor(cursorOf(items[items.length - 1]!)) }
}

/** BotChatStore over the shared Kysely database (both dialects, portable SQL only). */
export class KyselyBotChatStore implements BotChatStore {
  constructor(private readonly db: Kysely<Database>) {}

  // ---- tags ----

  /** Tags of rows (of one or several integrations), by tagKey(integration id, id). */
  private async tagsOf(db: Db, kind: TagKind, rows: { integration_id: string; id: string }[]): Promise<Map<string, Tags>> {
    const out = new Map<string, Tags>()
    if (rows.length === 0) return out
    const ids = [...new Set(rows.map((r) => r.id))]
    const integrationIds = [...new Set(rows.map((r) => r.integration_id))]
    const tagRows = kind === 'message'
      ? await db.selectFrom('message_tags').select(['integration_id', 'message_id as id', 'key', 'value']).where('message_id', 'in', ids).execute()
      : kind === 'user'
        ? await db.selectFrom('user_tags').select(['integration_id', 'user_id as id', 'key', 'value']).where('integration_id', 'in', integrationIds).where('user_id', 'in', ids).execute()
        : await db.selectFrom('conversation_tags').select(['integration_id', 'conversation_id as id', 'key', 'value']).where('integration_id', 'in', integrationIds).where('conversation_id', 'in', ids).execute()
    for (const r of tagRows) {
      const k = tagKey(r.integration_id, r.id)
      let tags = out.get(k)
      if (!tags) out.set(k, (tags = {}))
      tags[r.key] = r.value
    }
    return out
  }

  private async patchTags(db: Db, kind: TagKind, integrationId: string, id: string, patch: TagPatch | undefined): Promise<void> {
    for (const [key, value] of Object.entries(patch ?? {})) {
      if (kind === 'user') {
        if (value === null || value === '') await db.deleteFrom('user_tags').where('integration_id', '=', integrationId).where('user_id', '=', id).where('key', '=', key).execute()
        else await db.insertInto('user_tags').values({ integration_id: integrationId, user_id: id, key, value }).onConflict((oc) => oc.columns(['integration_id', 'user_id', 'key']).doUpdateSet({ value })).execute()
      } else if (kind === 'conversation') {
        if (value === null || value === '') await db.deleteFrom('conversation_tags').where('integration_id', '=', integrationId).where('conversation_id', '=', id).where('key', '=', key).execute()
        else await db.insertInto('conversation_tags').values({ integration_id: integrationId, conversation_id: id, key, value }).onConflict((oc) => oc.columns(['integration_id', 'conversation_id', 'key']).doUpdateSet({ value })).execute()
      } else {
        if (value === null || value === '') await db.deleteFrom('message_tags').where('message_id', '=', id).where('key', '=', key).execute()
        else await db.insertInto('message_tags').values({ message_id: id, integration_id: integrationId, key, value }).onConflict((oc) => oc.columns(['message_id', 'key']).doUpdateSet({ value })).execute()
      }
    }
  }

  /** `EXISTS (tag row key=value)` for every tag: the AND of all (always true without tags). */
  private static hasTags(kind: TagKind, ref: { integration: string; id: string }, tags: Tags | undefined): RawBuilder<SqlBool> {
    const entries = Object.entries(tags ?? {})
    if (entries.length === 0) return sql<SqlBool>`1 = 1`
    const { table, id } = TAG_TABLES[kind]
    const parts = entries.map(([key, value]) => sql`EXISTS (SELECT 1 FROM ${sql.table(table)} t WHERE t.${sql.ref(id)} = ${sql.ref(ref.id)}
      AND t.integration_id = ${sql.ref(ref.integration)} AND t.key = ${key} AND t.value = ${value})`)
    return sql<SqlBool>`(${sql.join(parts, sql` AND `)})`
  }

  // ---- users ----

  private toUser(r: UserSel, tags: Tags | undefined): BotChatUser {
    return {
      integrationId: r.integration_id, id: r.id, name: r.name, pictureUrl: r.picture_url, profile: r.profile, isBot: Number(r.is_bot) === 1,
      createdAt: Number(r.created_at), updatedAt: Number(r.updated_at), tags: tags ?? {}, properties: parseMap(r.properties), attributes: parseMap(r.attributes),
    }
  }

  private async usersWithTags(db: Db, rows: UserSel[]): Promise<BotChatUser[]> {
    const tags = await this.tagsOf(db, 'user', rows)
    return rows.map((r) => this.toUser(r, tags.get(tagKey(r.integration_id, r.id))))
  }

  async createUser(u: NewBotChatUser): Promise<BotChatUser> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.insertInto('users').values({
        integration_id: u.integrationId, id: u.id, name: u.name ?? null, picture_url: u.pictureUrl ?? null, profile: u.profile ?? null,
        is_bot: u.isBot ? 1 : 0, created_at: u.now, updated_at: u.now,
        properties: u.properties && Object.keys(u.properties).length > 0 ? JSON.stringify(u.properties) : null,
        attributes: u.attributes && Object.keys(u.attributes).length > 0 ? JSON.stringify(u.attributes) : null,
      }).onConflict((oc) => oc.columns(['integration_id', 'id']).doNothing()).returningAll().executeTakeFirst()
      if (!r) throw new UniqueViolation('User')
      await this.patchTags(trx, 'user', u.integrationId, u.id, u.tags)
      return this.toUser(r, { ...u.tags })
    })
  }

  async getUser(integrationIds: string[], id: string): Promise<BotChatUser | undefined> {
    if (integrationIds.length === 0) return undefined
    const rows = await this.db.selectFrom('users').selectAll().where('integration_id', 'in', integrationIds).where('id', '=', id).execute()
    const r = integrationIds.map((i) => rows.find((row) => row.integration_id === i)).find((row) => row !== undefined)
    return r && (await this.usersWithTags(this.db, [r]))[0]
  }

  async getUsers(integrationId: string, ids: string[]): Promise<BotChatUser[]> {
    if (ids.length === 0) return []
    const rows = await this.db.selectFrom('users').selectAll().where('integration_id', '=', integrationId).where('id', 'in', ids).execute()
    const users = await this.usersWithTags(this.db, rows)
    return ids.map((id) => users.find((u) => u.id === id)).filter((u): u is BotChatUser => u !== undefined)
  }

  async findUser(integrationId: string, tags: Tags): Promise<BotChatUser | undefined> {
    const r = await this.db.selectFrom('users as u').selectAll('u').where('u.integration_id', '=', integrationId).where('u.is_bot', '=', 0)
      .where(KyselyBotChatStore.hasTags('user', { integration: 'u.integration_id', id: 'u.id' }, tags))
      .orderBy('u.created_at').orderBy('u.id').limit(1).executeTakeFirst()
    return r && (await this.usersWithTags(this.db, [r]))[0]
  }

  async updateUser(integrationId: string, id: string, patch: BotChatUserPatch, now: number): Promise<BotChatUser | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // An UPDATE first: it takes the row lock (PostgreSQL), so concurrent map patches apply one after the other.
      const current = await trx.updateTable('users').set({ updated_at: now }).where('integration_id', '=', integrationId).where('id', '=', id).returningAll().executeTakeFirst()
      if (!current) return undefined
      const properties = patchMap(parseMap(current.properties), patch.properties)
      const attributes = patchMap(parseMap(current.attributes), patch.attributes)
      const r = await trx.updateTable('users').set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.pictureUrl !== undefined && { picture_url: patch.pictureUrl }),
        properties: properties && JSON.stringify(properties),
        attributes: attributes && JSON.stringify(attributes),
      }).where('integration_id', '=', integrationId).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
      await this.patchTags(trx, 'user', integrationId, id, patch.tags)
      return (await this.usersWithTags(trx, [r]))[0]
    })
  }

  async listUsers(f: UserFilter, page: PageRequest): Promise<Page<BotChatUser>> {
    const sortColumn = f.sortField === 'updatedAt' ? 'updated_at' : 'created_at'
    const rangeColumn = f.rangeField === 'updatedAt' ? 'u.updated_at' : 'u.created_at'
    const p = await keysetAcross<UserSel>(this.db, f.integrationIds, page, {
      column: `u.${sortColumn}`, name: sortColumn, idColumn: 'u.id', integrationColumn: 'u.integration_id', desc: f.sortDirection === 'desc',
      valueOf: (r) => Number(r[sortColumn]),
    }, (integrationId) => {
      let q = this.db.selectFrom('users as u').selectAll('u').where('u.integration_id', '=', integrationId).where('u.is_bot', '=', 0)
        .where(KyselyBotChatStore.hasTags('user', { integration: 'u.integration_id', id: 'u.id' }, f.tags))
      if (f.conversationId !== undefined) {
        const conversationId = f.conversationId
        q = q.where((eb) => eb.exists(eb.selectFrom('participants as p').select('p.user_id')
          .whereRef('p.integration_id', '=', 'u.integration_id').whereRef('p.user_id', '=', 'u.id').where('p.conversation_id', '=', conversationId)))
      }
      if (f.afterDate !== undefined) q = q.where(rangeColumn, '>', f.afterDate)
      if (f.beforeDate !== undefined) q = q.where(rangeColumn, '<', f.beforeDate)
      return q
    })
    return { items: await this.usersWithTags(this.db, p.items), next: p.next }
  }

  // ---- conversations ----

  private conversationQuery(db: Db) {
    return db.selectFrom('conversations as c').selectAll('c').select((eb) => eb.selectFrom('messages as m').select(eb.fn.countAll().as('n'))
      .whereRef('m.integration_id', '=', 'c.integration_id').whereRef('m.conversation_id', '=', 'c.id').as('message_count'))
  }

  private async conversationsWithTags(db: Db, rows: ConversationSel[]): Promise<BotChatConversation[]> {
    const tags = await this.tagsOf(db, 'conversation', rows)
    return rows.map((r) => ({
      integrationId: r.integration_id, id: r.id, ownerId: ownerOf(r.owner_id), lastSeq: Number(r.last_seq),
      createdAt: Number(r.created_at), updatedAt: Number(r.updated_at), channel: r.channel, tags: tags.get(tagKey(r.integration_id, r.id)) ?? {},
      properties: parseMap(r.properties), messageCount: Number(r.message_count ?? 0),
    }))
  }

  async createConversation(c: NewBotChatConversation): Promise<BotChatConversation> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.insertInto('conversations').values({
        integration_id: c.integrationId, id: c.id, owner_id: NO_OWNER, last_seq: 0, last_at: 0, bot_seq: 0, bot_lease_owner: null, bot_lease_until: 0,
        created_at: c.now, updated_at: c.now, channel: c.channel,
        properties: c.properties && Object.keys(c.properties).length > 0 ? JSON.stringify(c.properties) : null,
      }).onConflict((oc) => oc.columns(['integration_id', 'id']).doNothing()).returningAll().executeTakeFirst()
      if (!r) throw new UniqueViolation('Conversation')
      await this.patchTags(trx, 'conversation', c.integrationId, c.id, c.tags)
      return (await this.conversationsWithTags(trx, [{ ...r, message_count: 0 }]))[0]!
    })
  }

  async getConversation(integrationIds: string[], id: string): Promise<BotChatConversation | undefined> {
    if (integrationIds.length === 0) return undefined
    const rows = await this.conversationQuery(this.db).where('c.integration_id', 'in', integrationIds).where('c.id', '=', id).execute()
    const r = integrationIds.map((i) => rows.find((row) => row.integration_id === i)).find((row) => row !== undefined)
    return r && (await this.conversationsWithTags(this.db, [r]))[0]
  }

  async findConversation(integrationId: string, channel: string, tags: Tags): Promise<BotChatConversation | undefined> {
    const r = await this.conversationQuery(this.db).where('c.integration_id', '=', integrationId).where('c.channel', '=', channel)
      .where(KyselyBotChatStore.hasTags('conversation', { integration: 'c.integration_id', id: 'c.id' }, tags))
      .orderBy('c.created_at').orderBy('c.id').limit(1).executeTakeFirst()
    return r && (await this.conversationsWithTags(this.db, [r]))[0]
  }

  async updateConversation(integrationId: string, id: string, patch: BotChatConversationPatch, now: number): Promise<BotChatConversation | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx.updateTable('conversations').set({ updated_at: now }).where('integration_id', '=', integrationId).where('id', '=', id).returningAll().executeTakeFirst()
      if (!current) return undefined
      const properties = patchMap(parseMap(current.properties), patch.properties)
      await trx.updateTable('conversations').set({ properties: properties && JSON.stringify(properties) }).where('integration_id', '=', integrationId).where('id', '=', id).execute()
      await this.patchTags(trx, 'conversation', integrationId, id, patch.tags)
      const r = await this.conversationQuery(trx).where('c.integration_id', '=', integrationId).where('c.id', '=', id).executeTakeFirstOrThrow()
      return (await this.conversationsWithTags(trx, [r]))[0]
    })
  }

  async listConversations(f: ConversationFilter, page: PageRequest): Promise<Page<BotChatConversation>> {
    const column = f.sortField === 'updatedAt' ? 'updated_at' : 'created_at'
    const count = (eb: ExpressionBuilder<Database & { c: Database['conversations'] }, 'c'>) => eb.selectFrom('messages as m').select(eb.fn.countAll().as('n'))
      .whereRef('m.integration_id', '=', 'c.integration_id').whereRef('m.conversation_id', '=', 'c.id')
    const p = await keysetAcross<ConversationSel>(this.db, f.integrationIds, page, {
      column: `c.${column}`, name: column, idColumn: 'c.id', integrationColumn: 'c.integration_id', desc: f.sortDirection === 'desc',
      valueOf: (r) => Number(r[column]),
    }, (integrationId) => {
      let q = this.conversationQuery(this.db).where('c.integration_id', '=', integrationId)
        .where(KyselyBotChatStore.hasTags('conversation', { integration: 'c.integration_id', id: 'c.id' }, f.tags))
      if (f.channel !== undefined) q = q.where('c.channel', '=', f.channel)
      for (const userId of f.participantIds ?? []) {
        q = q.where((eb) => eb.exists(eb.selectFrom('participants as p').select('p.user_id')
          .whereRef('p.integration_id', '=', 'c.integration_id').whereRef('p.conversation_id', '=', 'c.id').where('p.user_id', '=', userId)))
      }
      if (f.afterDate !== undefined) q = q.where(`c.${column}`, '>', f.afterDate)
      if (f.beforeDate !== undefined) q = q.where(`c.${column}`, '<', f.beforeDate)
      if (f.minMessageCount !== undefined) { const n = f.minMessageCount; q = q.where((eb) => eb(count(eb), '>=', n)) }
      if (f.maxMessageCount !== undefined) { const n = f.maxMessageCount; q = q.where((eb) => eb(count(eb), '<=', n)) }
      return q
    })
    return { items: await this.conversationsWithTags(this.db, p.items), next: p.next }
  }

  // ---- messages ----

  private async messagesWithTags(db: Db, rows: MessageSel[]): Promise<BotChatMessage[]> {
    const tags = await this.tagsOf(db, 'message', rows)
    return rows.map((r) => ({ ...toMessage(r), tags: tags.get(tagKey(r.integration_id, r.id)) ?? {}, updatedAt: Number(r.updated_at ?? r.created_at) }))
  }

  async getMessage(integrationIds: string[], id: string): Promise<BotChatMessage | undefined> {
    if (integrationIds.length === 0) return undefined
    const r = await this.db.selectFrom('messages').selectAll().where('integration_id', 'in', integrationIds).where('id', '=', id).executeTakeFirst()
    return r && (await this.messagesWithTags(this.db, [r]))[0]
  }

  async findMessage(integrationId: string, conversationId: string, tags: Tags): Promise<BotChatMessage | undefined> {
    const r = await this.db.selectFrom('messages as m').selectAll('m').where('m.integration_id', '=', integrationId).where('m.conversation_id', '=', conversationId)
      .where(KyselyBotChatStore.hasTags('message', { integration: 'm.integration_id', id: 'm.id' }, tags))
      .orderBy('m.seq').limit(1).executeTakeFirst()
    return r && (await this.messagesWithTags(this.db, [r]))[0]
  }

  async tagMessage(integrationId: string, messageId: string, tags: Tags): Promise<boolean> {
    if (Object.keys(tags).length === 0) return true
    return this.db.transaction().execute(async (trx) => {
      const exists = await trx.selectFrom('messages').select('id').where('id', '=', messageId).where('integration_id', '=', integrationId).executeTakeFirst()
      if (!exists) return false
      await this.patchTags(trx, 'message', integrationId, messageId, tags)
      return true
    })
  }

  async updateMessage(integrationId: string, id: string, patch: BotChatMessagePatch, now: number): Promise<BotChatMessage | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('messages').set({
        updated_at: now,
        ...(patch.payload !== undefined && { payload: JSON.stringify(patch.payload) }),
        ...(patch.metadata !== undefined && { metadata: patch.metadata === null ? null : JSON.stringify(patch.metadata) }),
      })
        .where('integration_id', '=', integrationId).where('id', '=', id).returningAll().executeTakeFirst()
      if (!r) return undefined
      await this.patchTags(trx, 'message', integrationId, id, patch.tags)
      return (await this.messagesWithTags(trx, [r]))[0]
    })
  }

  async listMessages(f: MessageFilter, page: PageRequest): Promise<Page<BotChatMessage>> {
    if (f.conversationId !== undefined && f.integrationIds.length === 1) return this.listConversationMessages(f.integrationIds[0]!, f.conversationId, f, page)
    const p = await keysetAcross<MessageSel>(this.db, f.integrationIds, page, {
      column: 'm.created_at', name: 'created_at', idColumn: 'm.id', integrationColumn: 'm.integration_id', desc: true,
      valueOf: (r) => Number(r.created_at),
    }, (integrationId) => {
      let q = this.db.selectFrom('messages as m').selectAll('m').where('m.integration_id', '=', integrationId)
        .where(KyselyBotChatStore.hasTags('message', { integration: 'm.integration_id', id: 'm.id' }, f.tags))
      if (f.conversationId !== undefined) q = q.where('m.conversation_id', '=', f.conversationId)
      if (f.afterDate !== undefined) q = q.where('m.created_at', '>', f.afterDate)
      if (f.beforeDate !== undefined) q = q.where('m.created_at', '<', f.beforeDate)
      return q
    })
    return { items: await this.messagesWithTags(this.db, p.items), next: p.next }
  }

  /**
   * One conversation's messages, newest first, read backwards on the seq index (integration_id, conversation_id, seq)
   * that every append writes anyway: no index of their own (a second one on created_at cost each append ~40 µs of
   * the main thread on SQLite, measured). A conversation's createdAt strictly increases with seq (conversations.last_at,
   * migration 0001), so seq order is the bot-wide listing's (createdAt, id) order, and the token stays that listing's
   * (createdAt, id, integration). Dates and the token become seq bounds: the token's own message when it still
   * exists, else (and for afterDate/beforeDate) a binary search on the seq index, ~log2(the conversation's seq) lookups.
   */
  private async listConversationMessages(integrationId: string, conversationId: string, f: MessageFilter, page: PageRequest): Promise<Page<BotChatMessage>> {
    // The conversation's last seq bounds every search below; read once, when one is needed.
    let lastSeq: Promise<number> | undefined
    const firstFrom = (at: number) => this.firstMessageSeqFrom(integrationId, conversationId, at, (lastSeq ??= this.lastSeqOf(integrationId, conversationId)))
    // `created_at < X` is `seq < firstFrom(X)`, with no bound when there is none.
    let below: number | undefined
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string', 'string']) as [number, string, string]
      const own = await this.db.selectFrom('messages').select(['seq', 'created_at', 'conversation_id']).where('id', '=', id).where('integration_id', '=', integrationId).executeTakeFirst()
      below = own && own.conversation_id === conversationId && Number(own.created_at) === at ? Number(own.seq) : await firstFrom(at)
    }
    if (f.beforeDate !== undefined) {
      const bound = await firstFrom(f.beforeDate)
      if (bound !== undefined) below = Math.min(below ?? Infinity, bound)
    }
    // `created_at > X` is `seq >= firstFrom(X + 1)`; nothing when there is none.
    let from: number | undefined
    if (f.afterDate !== undefined) {
      from = await firstFrom(f.afterDate + 1)
      if (from === undefined) return { items: [] }
    }
    let q = this.db.selectFrom('messages as m').selectAll('m').where('m.integration_id', '=', integrationId).where('m.conversation_id', '=', conversationId)
      .where(KyselyBotChatStore.hasTags('message', { integration: 'm.integration_id', id: 'm.id' }, f.tags))
    if (below !== undefined) q = q.where('m.seq', '<', below)
    if (from !== undefined) q = q.where('m.seq', '>=', from)
    const rows = await q.orderBy('m.seq', 'desc').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit)
    const last = items[items.length - 1]
    const next = rows.length > page.limit && last ? encodeCursor([Number(last.created_at), last.id, last.integration_id]) : undefined
    return { items: await this.messagesWithTags(this.db, items), ...(next !== undefined && { next }) }
  }

  private async lastSeqOf(integrationId: string, conversationId: string): Promise<number> {
    const r = await this.db.selectFrom('conversations').select('last_seq').where('integration_id', '=', integrationId).where('id', '=', conversationId).executeTakeFirst()
    return r ? Number(r.last_seq) : 0
  }

  /**
   * The seq of the conversation's first message created at `at` or later (undefined: none), by binary search on the seq
   * index up to `lastSeq`: createdAt grows with seq, and seqs have gaps (events, signals and deleted messages take seqs too).
   */
  private async firstMessageSeqFrom(integrationId: string, conversationId: string, at: number, lastSeq: Promise<number>): Promise<number | undefined> {
    let lo = 0
    let hi = await lastSeq
    let found: number | undefined
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2)
      const r = await this.db.selectFrom('messages').select(['seq', 'created_at'])
        .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('seq', '>=', mid)
        .orderBy('seq').limit(1).executeTakeFirst()
      if (!r || Number(r.seq) > hi) {
        hi = mid - 1 // no message in [mid, hi]
      } else if (Number(r.created_at) >= at) {
        found = Number(r.seq) // the first one is at r.seq or before mid
        hi = mid - 1
      } else {
        lo = Number(r.seq) + 1 // every message up to r.seq is older
      }
    }
    return found
  }

  // ---- tag values ----

  async listTagValues(integrationIds: string[], kind: TagKind, key: string, page: PageRequest): Promise<Page<string>> {
    if (integrationIds.length === 0) return { items: [] }
    const { table } = TAG_TABLES[kind]
    let q = this.db.selectFrom(`${table} as t` as 'user_tags as t').select('t.value').distinct()
      .where('t.integration_id', 'in', integrationIds).where('t.key', '=', key)
    if (page.after !== undefined) {
      const [after] = decodeCursor(page.after, ['string'], 4096) as [string]
      q = q.where('t.value', '>', after)
    }
    const rows = await q.orderBy('t.value').limit(page.limit + 1).execute()
    return pageOf(rows.map((r) => r.value), page.limit, (v) => [v])
  }
}

