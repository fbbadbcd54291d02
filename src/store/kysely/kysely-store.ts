import { sql, type Kysely, type QueryCreator, type Selectable, type Transaction } from 'kysely'
import type { Database } from './schema.js'
import { decodeCursor, encodeCursor } from '../cursor.js'
import { KyselyFileStore } from './kysely-file-store.js'
import { KyselyKnowledgeStore } from './kysely-knowledge-store.js'
import { KyselyPassageVectorStore } from './kysely-passage-vector-store.js'
import type { VectorEngine } from '../passage-vector-store.js'
import { KyselyRuntimeEventStore } from './kysely-runtime-event-store.js'
import { KyselyStateStore } from './kysely-state-store.js'
import { KyselyAnalyticsStore } from './kysely-analytics-store.js'
import { KyselyQualityStore } from './kysely-quality-store.js'
import { KyselyLlmStore } from './kysely-llm-store.js'
import { KyselyTelemetryStore } from './kysely-telemetry-store.js'
import { KyselyWorkflowStore } from './kysely-workflow-store.js'
import { KyselyRecurringEventStore } from './kysely-recurring-event-store.js'
import { KyselyWebhookStore } from './kysely-webhook-store.js'
import { KyselyHandoffStore } from './kysely-handoff-store.js'
import { KyselyIntegrationStore } from './kysely-integration-store.js'
import { KyselyIntegrationOutboxStore } from './kysely-integration-outbox-store.js'
import { KyselyTableStore } from './kysely-table-store.js'
import { KyselyBotChatStore } from './kysely-bot-chat-store.js'
import { KyselyPackageStore } from './kysely-package-store.js'
import { KyselyConsoleSessionStore } from './kysely-console-session-store.js'
import { KyselyConversationArchiveStore } from './kysely-conversation-archive-store.js'
import { IdTaken, eventColumns, eventRow, mergeSignals, messageColumns, messageRow, takenAnswer, toConversation, toEvent, toMessage, toUser } from './rows.js'
import { applyStatePatch, isEmptyPatch } from '../../lib/state-patch.js'
import { inRetriedTransaction } from './conflicts.js'
import {
  UniqueViolation,
  type Appended, type AccessTokenRow, type AccountRow, type BotLogFilter, type BotLogRow, type BotStateKey, type BotStateWrite, type BotApiKeyRow, type BotListFilter, type BotPatch, type DeletedBot, type BotRow, type MemberRow, type ConversationRow, type EventRow, type IntegrationRow,
  type JsonObject, type MessageRow, type NewEvent, type NewMessage, type NewUser, type Page, type PageRequest,
  type SignalRecord, type Store, type UserPatch, type UserRow, type WorkspaceRow,
} from '../store.js'

type Db = Kysely<Database> | Transaction<Database>

const toBot = (r: Selectable<Database['bots']>): BotRow => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  description: r.description,
  tags: JSON.parse(r.tags) as Record<string, string>,
  dev: Number(r.dev) === 1,
  signingSecret: r.signing_secret,
  maxExecutionTime: r.max_execution_time === null ? null : Number(r.max_execution_time),
  code: r.code,
  deployedAt: r.deployed_at === null ? null : Number(r.deployed_at),
  url: r.url ?? null,
  webchat: r.webchat ? (JSON.parse(r.webchat) as JsonObject) : null,
  actions: r.actions ? (JSON.parse(r.actions) as JsonObject) : null,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

const toIntegration = (r: Selectable<Database['integrations']>): IntegrationRow => ({
  id: r.id,
  botId: r.bot_id,
  name: r.name,
  webhookId: r.webhook_id,
  encryptionKey: r.encryption_key,
  enabled: Number(r.enabled) === 1,
  configuration: JSON.parse(r.configuration) as JsonObject,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

const toAccount = (r: Selectable<Database['accounts']>): AccountRow => ({
  id: r.id, email: r.email, displayName: r.display_name, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
})

const toWorkspace = (r: Selectable<Database['workspaces']>): WorkspaceRow => ({
  id: r.id, name: r.name, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
})

const pageOf = <T>(rows: T[], limit: number, cursorOf: (last: T) => (string | number)[]): Page<T> => {
  if (rows.length <= limit) return { items: rows }
  const items = rows.slice(0, limit)
  return { items, next: encodeCursor(cursorOf(items[items.length - 1]!)) }
}

/**
 * One Store implementation for both dialects: only portable SQL (RETURNING, ON CONFLICT, CASE),
 * no engine-specific functions, so the PostgreSQL engine reuses every query.
 */
export class KyselyStore implements Store {
  readonly sendsAppendNotifications: boolean = false
  readonly files: KyselyFileStore
  readonly knowledge: KyselyKnowledgeStore
  readonly passageVectors: KyselyPassageVectorStore
  readonly webhooks: KyselyWebhookStore
  readonly handoffs: KyselyHandoffStore
  readonly integrations: KyselyIntegrationStore
  readonly integrationOutbox: KyselyIntegrationOutboxStore
  readonly runtimeEvents: KyselyRuntimeEventStore
  readonly states: KyselyStateStore
  readonly workflows: KyselyWorkflowStore
  readonly recurringEvents: KyselyRecurringEventStore
  readonly telemetry: KyselyTelemetryStore
  readonly botChat: KyselyBotChatStore
  readonly tables: KyselyTableStore
  readonly analytics: KyselyAnalyticsStore
  readonly quality: KyselyQualityStore
  readonly consoleSessions: KyselyConsoleSessionStore
  readonly conversationArchive: KyselyConversationArchiveStore
  readonly packages: KyselyPackageStore
  readonly llm: KyselyLlmStore

  constructor(
    readonly db: Kysely<Database>,
    readonly dialect: 'sqlite' | 'postgres',
    /** How passage vectors are scored: SQLite's loaded extension or its JS function (createSqliteStore); the dialect's default otherwise. */
    vectorEngine?: VectorEngine,
  ) {
    this.files = new KyselyFileStore(db, dialect)
    this.knowledge = new KyselyKnowledgeStore(db, dialect, this.files)
    this.passageVectors = new KyselyPassageVectorStore(db, dialect, this.files, vectorEngine)
    this.webhooks = new KyselyWebhookStore(db)
    this.handoffs = new KyselyHandoffStore(db)
    this.integrations = new KyselyIntegrationStore(db)
    this.integrationOutbox = new KyselyIntegrationOutboxStore(db)
    this.runtimeEvents = new KyselyRuntimeEventStore(db)
    this.states = new KyselyStateStore(db, dialect, this.runtimeEvents)
    this.workflows = new KyselyWorkflowStore(db, dialect, this.runtimeEvents)
    this.recurringEvents = new KyselyRecurringEventStore(db, this.runtimeEvents)
    this.telemetry = new KyselyTelemetryStore(db)
    this.botChat = new KyselyBotChatStore(db)
    this.tables = new KyselyTableStore(db, dialect)
    this.analytics = new KyselyAnalyticsStore(db)
    this.quality = new KyselyQualityStore(db)
    this.consoleSessions = new KyselyConsoleSessionStore(db)
    this.conversationArchive = new KyselyConversationArchiveStore(db)
    this.packages = new KyselyPackageStore(db)
    this.llm = new KyselyLlmStore(db)
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db)
  }

  private readonly locks = new Map<string, Promise<unknown>>()

  /** In-process: callers of one name run one after the other. SQLite has one process; PostgresStore adds an advisory lock. */
  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(name) ?? Promise.resolve()
    const run = before.catch(() => {}).then(fn)
    const tail = run.catch(() => {})
    this.locks.set(name, tail)
    void tail.then(() => {
      if (this.locks.get(name) === tail) this.locks.delete(name)
    })
    return run
  }

  async close(): Promise<void> {
    await this.db.destroy()
  }

  // ---- workspaces, accounts, tokens ----
  async createWorkspace(w: WorkspaceRow): Promise<void> {
    await this.db.insertInto('workspaces').values({ id: w.id, name: w.name, created_at: w.createdAt, updated_at: w.updatedAt }).execute()
  }

  async createAccount(a: AccountRow): Promise<void> {
    const row = await this.db
      .insertInto('accounts')
      .values({ id: a.id, email: a.email, display_name: a.displayName, created_at: a.createdAt, updated_at: a.updatedAt })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst()
    if (!row) throw new UniqueViolation('Account')
  }

  async addWorkspaceMember(workspaceId: string, accountId: string, role: string, now: number): Promise<void> {
    const row = await this.db
      .insertInto('workspace_members')
      .values({ workspace_id: workspaceId, account_id: accountId, role, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['workspace_id', 'account_id']).doNothing())
      .returning('account_id')
      .executeTakeFirst()
    if (!row) throw new UniqueViolation('Workspace member')
  }

  async createMemberAccount(a: AccountRow, t: AccessTokenRow & { tokenHash: string }, workspaceId: string, role: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('accounts')
        .values({ id: a.id, email: a.email, display_name: a.displayName, created_at: a.createdAt, updated_at: a.updatedAt })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst()
      if (!row) throw new UniqueViolation('Account')
      await trx.insertInto('access_tokens').values({ id: t.id, account_id: a.id, token_hash: t.tokenHash, note: t.note, created_at: t.createdAt }).execute()
      await trx.insertInto('workspace_members').values({ workspace_id: workspaceId, account_id: a.id, role, created_at: a.createdAt, updated_at: a.createdAt }).execute()
    })
  }

  async createAccessToken(t: AccessTokenRow & { tokenHash: string }): Promise<void> {
    await this.db
      .insertInto('access_tokens')
      .values({ id: t.id, account_id: t.accountId, token_hash: t.tokenHash, note: t.note, created_at: t.createdAt })
      .execute()
  }

  async findAccessTokenByHash(tokenHash: string): Promise<AccessTokenRow | undefined> {
    const r = await this.db.selectFrom('access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
    return r && { id: r.id, accountId: r.account_id, note: r.note, createdAt: Number(r.created_at) }
  }

  async getAccount(id: string): Promise<AccountRow | undefined> {
    const r = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toAccount(r)
  }

  async getAccountByEmail(email: string): Promise<AccountRow | undefined> {
    const r = await this.db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst()
    return r && toAccount(r)
  }

  async listAccessTokens(accountId: string): Promise<AccessTokenRow[]> {
    const rows = await this.db.selectFrom('access_tokens').select(['id', 'account_id', 'note', 'created_at'])
      .where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute()
    return rows.map((r) => ({ id: r.id, accountId: r.account_id, note: r.note, createdAt: Number(r.created_at) }))
  }

  async deleteAccessToken(accountId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('access_tokens').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async getWorkspace(id: string): Promise<WorkspaceRow | undefined> {
    const r = await this.db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toWorkspace(r)
  }

  async listWorkspacesOf(accountId: string, page: PageRequest): Promise<Page<WorkspaceRow>> {
    let q = this.db
      .selectFrom('workspace_members as m')
      .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
      .selectAll('w')
      .where('m.account_id', '=', accountId)
    if (page.after !== undefined) {
      const [createdAt, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('w.created_at', '>', createdAt), eb.and([eb('w.created_at', '=', createdAt), eb('w.id', '>', id)])]))
    }
    const rows = await q.orderBy('w.created_at').orderBy('w.id').limit(page.limit + 1).execute()
    return pageOf(rows.map(toWorkspace), page.limit, (w) => [w.createdAt, w.id])
  }

  async updateWorkspace(id: string, name: string, now: number): Promise<WorkspaceRow | undefined> {
    const r = await this.db.updateTable('workspaces').set({ name, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst()
    return r && toWorkspace(r)
  }

  async deleteWorkspace(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('workspaces').where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async countBots(workspaceId: string): Promise<number> {
    const r = await this.db.selectFrom('bots').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()
    return Number(r.n)
  }

  private memberQuery(workspaceId: string) {
    return this.db
      .selectFrom('workspace_members as m')
      .innerJoin('accounts as a', 'a.id', 'm.account_id')
      .select(['m.workspace_id', 'm.role', 'm.created_at as joined_at', 'm.updated_at as role_updated_at', 'a.id', 'a.email', 'a.display_name', 'a.created_at', 'a.updated_at'])
      .where('m.workspace_id', '=', workspaceId)
  }

  private toMember(r: { workspace_id: string; role: string; joined_at: number; role_updated_at: number; id: string; email: string; display_name: string; created_at: number; updated_at: number }): MemberRow {
    return {
      workspaceId: r.workspace_id,
      role: r.role,
      createdAt: Number(r.joined_at),
      updatedAt: Number(r.role_updated_at),
      account: { id: r.id, email: r.email, displayName: r.display_name, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) },
    }
  }

  async getMember(workspaceId: string, accountId: string): Promise<MemberRow | undefined> {
    const r = await this.memberQuery(workspaceId).where('m.account_id', '=', accountId).executeTakeFirst()
    return r && this.toMember(r)
  }

  async listMembers(workspaceId: string, page: PageRequest): Promise<Page<MemberRow>> {
    let q = this.memberQuery(workspaceId)
    if (page.after !== undefined) {
      const [joinedAt, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('m.created_at', '>', joinedAt), eb.and([eb('m.created_at', '=', joinedAt), eb('a.id', '>', id)])]))
    }
    const rows = await q.orderBy('m.created_at').orderBy('a.id').limit(page.limit + 1).execute()
    return pageOf(rows.map((r) => this.toMember(r)), page.limit, (m) => [m.createdAt, m.account.id])
  }

  async updateMemberRole(workspaceId: string, accountId: string, role: string, now: number): Promise<MemberRow | undefined> {
    await this.db.updateTable('workspace_members').set({ role, updated_at: now }).where('workspace_id', '=', workspaceId).where('account_id', '=', accountId).execute()
    return this.getMember(workspaceId, accountId)
  }

  async removeMember(workspaceId: string, accountId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('workspace_members').where('workspace_id', '=', workspaceId).where('account_id', '=', accountId).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async countWorkspaces(): Promise<number> {
    const r = await this.db.selectFrom('workspaces').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return Number(r.n)
  }

  // ---- bots, integrations ----
  async createBot(bot: BotRow, integrations: IntegrationRow[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('bots')
        .values({
          id: bot.id, workspace_id: bot.workspaceId, name: bot.name, description: bot.description, tags: JSON.stringify(bot.tags),
          dev: bot.dev ? 1 : 0, signing_secret: bot.signingSecret, code: bot.code, max_execution_time: bot.maxExecutionTime, deployed_at: bot.deployedAt, url: bot.url,
          webchat: bot.webchat === null ? null : JSON.stringify(bot.webchat),
          ...(bot.actions != null && { actions: JSON.stringify(bot.actions) }),
          created_at: bot.createdAt, updated_at: bot.updatedAt,
        })
        .execute()
      const tags = Object.entries(bot.tags)
      if (tags.length > 0) await trx.insertInto('bot_tags').values(tags.map(([key, value]) => ({ bot_id: bot.id, key, value }))).execute()
      for (const i of integrations) await this.insertIntegration(trx, i, bot.name)
    })
  }

  async getBot(id: string): Promise<BotRow | undefined> {
    const r = await this.db.selectFrom('bots').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toBot(r)
  }

  async listBots(filter: BotListFilter, page: PageRequest): Promise<Page<BotRow>> {
    const column = filter.sortField === 'updatedAt' ? 'b.updated_at' : 'b.created_at'
    const desc = filter.sortDirection === 'desc'
    let q = this.db.selectFrom('bots as b').selectAll('b').where('b.workspace_id', '=', filter.workspaceId)
    if (filter.dev !== undefined) q = q.where('b.dev', '=', filter.dev ? 1 : 0)
    for (const [key, value] of Object.entries(filter.tags ?? {})) {
      q = q.where((eb) => eb.exists(eb.selectFrom('bot_tags as t').select('t.bot_id').whereRef('t.bot_id', '=', 'b.id').where('t.key', '=', key).where('t.value', '=', value)))
    }
    for (const name of filter.integrationNames ?? []) {
      q = q.where((eb) => eb.exists(eb.selectFrom('integrations as i').select('i.id').whereRef('i.bot_id', '=', 'b.id').where('i.name', '=', name).where('i.enabled', '=', 1)))
    }
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      const op = desc ? '<' : '>'
      q = q.where((eb) => eb.or([eb(column, op, at), eb.and([eb(column, '=', at), eb('b.id', op, id)])]))
    }
    const rows = await q.orderBy(column, desc ? 'desc' : 'asc').orderBy('b.id', desc ? 'desc' : 'asc').limit(page.limit + 1).execute()
    return pageOf(rows.map(toBot), page.limit, (b) => [filter.sortField === 'updatedAt' ? b.updatedAt : b.createdAt, b.id])
  }

  async updateBot(id: string, patch: BotPatch, now: number): Promise<BotRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // An UPDATE, not a SELECT: it takes the row lock first (PostgreSQL), so concurrent patches of the
      // tags JSON apply one after the other instead of overwriting each other.
      const current = await trx.updateTable('bots').set({ updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst()
      if (!current) return undefined
      const tags = JSON.parse(current.tags) as Record<string, string>
      for (const [key, value] of Object.entries(patch.tags ?? {})) {
        if (value === null) {
          delete tags[key]
          await trx.deleteFrom('bot_tags').where('bot_id', '=', id).where('key', '=', key).execute()
        } else {
          tags[key] = value
          await trx.insertInto('bot_tags').values({ bot_id: id, key, value }).onConflict((oc) => oc.columns(['bot_id', 'key']).doUpdateSet({ value })).execute()
        }
      }
      const r = await trx
        .updateTable('bots')
        .set({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(patch.dev !== undefined && { dev: patch.dev ? 1 : 0 }),
          ...(patch.code !== undefined && { code: patch.code }),
          ...(patch.maxExecutionTime !== undefined && { max_execution_time: patch.maxExecutionTime }),
          ...(patch.deployedAt !== undefined && { deployed_at: patch.deployedAt }),
          ...(patch.url !== undefined && { url: patch.url }),
          ...(patch.webchat !== undefined && { webchat: patch.webchat === null ? null : JSON.stringify(patch.webchat) }),
          ...(patch.actions !== undefined && { actions: patch.actions === null ? null : JSON.stringify(patch.actions) }),
          tags: JSON.stringify(tags),
          updated_at: now,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
      return r && toBot(r)
    })
  }

  async deleteBot(id: string): Promise<DeletedBot | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // PostgreSQL: lock the bot's integrations first. A webhook delivery being queued holds a key-share
      // lock on its integration until it commits, which this waits for (the delivery is then listed
      // below); one queued later waits for this transaction and then fails its foreign key check
      // (WebhookStore.enqueue: undefined). SQLite runs one transaction at a time anyway.
      if (this.dialect === 'postgres') await trx.selectFrom('integrations').select('id').where('bot_id', '=', id).forUpdate().execute()
      const webhookBlobNames = await this.webhooks.blobNamesOfBot(id, trx)
      const r = await trx.deleteFrom('bots').where('id', '=', id).executeTakeFirst()
      return Number(r.numDeletedRows) > 0 ? { webhookBlobNames } : undefined
    })
  }

  /** An integration and its bot user (id = the bot id), so no caller can claim that id first. */
  private async insertIntegration(trx: Db, i: IntegrationRow, botName: string): Promise<void> {
    await trx
      .insertInto('integrations')
      .values({
        id: i.id, bot_id: i.botId, name: i.name, webhook_id: i.webhookId, encryption_key: i.encryptionKey,
        enabled: i.enabled ? 1 : 0, configuration: JSON.stringify(i.configuration), created_at: i.createdAt, updated_at: i.updatedAt,
      })
      .execute()
    await trx
      .insertInto('users')
      .values({ integration_id: i.id, id: i.botId, name: botName, picture_url: null, profile: null, is_bot: 1, created_at: i.createdAt, updated_at: i.createdAt })
      .execute()
  }

  async createIntegration(i: IntegrationRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const bot = await trx.selectFrom('bots').select('name').where('id', '=', i.botId).executeTakeFirstOrThrow()
      await this.insertIntegration(trx, i, bot.name)
    })
  }

  async updateIntegration(id: string, patch: { enabled?: boolean; encryptionKey?: string; configuration?: JsonObject }, now: number): Promise<void> {
    await this.db
      .updateTable('integrations')
      .set({
        ...(patch.enabled !== undefined && { enabled: patch.enabled ? 1 : 0 }),
        ...(patch.encryptionKey !== undefined && { encryption_key: patch.encryptionKey }),
        ...(patch.configuration !== undefined && { configuration: JSON.stringify(patch.configuration) }),
        updated_at: now,
      })
      .where('id', '=', id)
      .execute()
  }

  async createBotApiKey(k: BotApiKeyRow & { tokenHash: string }): Promise<void> {
    await this.db.insertInto('bot_api_keys').values({ id: k.id, bot_id: k.botId, token_hash: k.tokenHash, note: k.note, created_at: k.createdAt }).execute()
  }

  async listBotApiKeys(botId: string): Promise<BotApiKeyRow[]> {
    const rows = await this.db.selectFrom('bot_api_keys').select(['id', 'bot_id', 'note', 'created_at']).where('bot_id', '=', botId).orderBy('created_at').orderBy('id').execute()
    return rows.map((r) => ({ id: r.id, botId: r.bot_id, note: r.note, createdAt: Number(r.created_at) }))
  }

  async deleteBotApiKey(botId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('bot_api_keys').where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async findBotApiKeyByHash(tokenHash: string): Promise<BotApiKeyRow | undefined> {
    const r = await this.db.selectFrom('bot_api_keys').select(['id', 'bot_id', 'note', 'created_at']).where('token_hash', '=', tokenHash).executeTakeFirst()
    return r && { id: r.id, botId: r.bot_id, note: r.note, createdAt: Number(r.created_at) }
  }

  async getBotApiKey(id: string): Promise<BotApiKeyRow | undefined> {
    const r = await this.db.selectFrom('bot_api_keys').select(['id', 'bot_id', 'note', 'created_at']).where('id', '=', id).executeTakeFirst()
    return r && { id: r.id, botId: r.bot_id, note: r.note, createdAt: Number(r.created_at) }
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    await this.db.insertInto('settings').values({ key, value: create() }).onConflict((oc) => oc.column('key').doNothing()).execute()
    const r = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow()
    return r.value
  }

  async getIntegration(id: string): Promise<IntegrationRow | undefined> {
    const r = await this.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toIntegration(r)
  }

  async getIntegrationByWebhookId(webhookId: string): Promise<IntegrationRow | undefined> {
    const r = await this.db.selectFrom('integrations').selectAll().where('webhook_id', '=', webhookId).executeTakeFirst()
    return r && toIntegration(r)
  }

  async listIntegrations(botId: string): Promise<IntegrationRow[]> {
    const rows = await this.db.selectFrom('integrations').selectAll().where('bot_id', '=', botId).orderBy('name').execute()
    return rows.map(toIntegration)
  }

  // ---- users and keys ----
  private async insertUser(db: Db, u: NewUser): Promise<UserRow | undefined> {
    const r = await db
      .insertInto('users')
      .values({
        integration_id: u.integrationId, id: u.id, name: u.name ?? null, picture_url: u.pictureUrl ?? null,
        profile: u.profile ?? null, is_bot: u.isBot ? 1 : 0, created_at: u.now, updated_at: u.now,
      })
      .onConflict((oc) => oc.columns(['integration_id', 'id']).doNothing())
      .returningAll()
      .executeTakeFirst()
    return r && toUser(r)
  }

  async createUser(u: NewUser): Promise<UserRow> {
    const user = await this.insertUser(this.db, u)
    if (!user) throw new UniqueViolation('User')
    return user
  }

  async getOrCreateUser(u: NewUser): Promise<{ user: UserRow; created: boolean }> {
    const created = await this.insertUser(this.db, u)
    if (created) return { user: created, created: true }
    const existing = await this.getUser(u.integrationId, u.id)
    if (!existing) throw new Error('user vanished between insert and select')
    return { user: existing, created: false }
  }

  async getUser(integrationId: string, id: string): Promise<UserRow | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('integration_id', '=', integrationId).where('id', '=', id).executeTakeFirst()
    return r && toUser(r)
  }

  async updateUser(integrationId: string, id: string, patch: UserPatch, now: number): Promise<UserRow | undefined> {
    const r = await this.db
      .updateTable('users')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.pictureUrl !== undefined && { picture_url: patch.pictureUrl }),
        ...(patch.profile !== undefined && { profile: patch.profile }),
        updated_at: now,
      })
      .where('integration_id', '=', integrationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return r && toUser(r)
  }

  async deleteUser(integrationId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('users').where('integration_id', '=', integrationId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async addUserKey(integrationId: string, userId: string, keyHash: string, now: number): Promise<void> {
    await this.db.insertInto('user_keys').values({ key_hash: keyHash, integration_id: integrationId, user_id: userId, created_at: now }).execute()
  }

  async findUserByKeyHash(integrationId: string, keyHash: string): Promise<UserRow | undefined> {
    const r = await this.db
      .selectFrom('user_keys as k')
      .innerJoin('users as u', (j) => j.onRef('u.integration_id', '=', 'k.integration_id').onRef('u.id', '=', 'k.user_id'))
      .selectAll('u')
      .where('k.key_hash', '=', keyHash)
      .where('k.integration_id', '=', integrationId)
      .executeTakeFirst()
    return r && toUser(r)
  }

  // ---- conversations and participants ----
  async createConversation(integrationId: string, id: string, ownerId: string, now: number): Promise<ConversationRow> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .insertInto('conversations')
        .values({ integration_id: integrationId, id, owner_id: ownerId, last_seq: 0, last_at: 0, bot_seq: 0, bot_lease_owner: null, bot_lease_until: 0, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['integration_id', 'id']).doNothing())
        .returningAll()
        .executeTakeFirst()
      if (!r) throw new UniqueViolation('Conversation')
      await trx.insertInto('participants').values({ integration_id: integrationId, conversation_id: id, user_id: ownerId, created_at: now }).execute()
      return toConversation(r)
    })
  }

  async getConversation(integrationId: string, id: string): Promise<ConversationRow | undefined> {
    const r = await this.db.selectFrom('conversations').selectAll().where('integration_id', '=', integrationId).where('id', '=', id).executeTakeFirst()
    return r && toConversation(r)
  }

  async deleteConversation(integrationId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('conversations').where('integration_id', '=', integrationId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async listConversationsOf(integrationId: string, userId: string, page: PageRequest): Promise<Page<ConversationRow>> {
    let q = this.db
      .selectFrom('participants as p')
      .innerJoin('conversations as c', (j) => j.onRef('c.integration_id', '=', 'p.integration_id').onRef('c.id', '=', 'p.conversation_id'))
      .selectAll('c')
      .where('p.integration_id', '=', integrationId)
      .where('p.user_id', '=', userId)
    if (page.after !== undefined) {
      const [createdAt, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('c.created_at', '<', createdAt), eb.and([eb('c.created_at', '=', createdAt), eb('c.id', '<', id)])]))
    }
    const rows = await q.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').limit(page.limit + 1).execute()
    return pageOf(rows.map(toConversation), page.limit, (c) => [c.createdAt, c.id])
  }

  async getConversationFor(integrationId: string, conversationId: string, userId: string): Promise<{ conversation: ConversationRow; isParticipant: boolean } | undefined> {
    const r = await this.db
      .selectFrom('conversations as c')
      .leftJoin('participants as p', (j) =>
        j.onRef('p.integration_id', '=', 'c.integration_id').onRef('p.conversation_id', '=', 'c.id').on('p.user_id', '=', userId))
      .selectAll('c')
      .select('p.user_id as participant')
      .where('c.integration_id', '=', integrationId)
      .where('c.id', '=', conversationId)
      .executeTakeFirst()
    return r && { conversation: toConversation(r), isParticipant: r.participant !== null }
  }

  async isParticipant(integrationId: string, conversationId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('participants')
      .select('user_id')
      .where('integration_id', '=', integrationId)
      .where('conversation_id', '=', conversationId)
      .where('user_id', '=', userId)
      .executeTakeFirst()
    return r !== undefined
  }

  /**
   * The UPDATE that takes the conversation's next sequence number and a strictly increasing
   * timestamp (row-locked on PostgreSQL until the transaction ends); with `participant`, only if that
   * user takes part in the conversation. Callers add RETURNING last_seq, last_at.
   */
  protected seqUpdate(db: QueryCreator<Database>, integrationId: string, conversationId: string, now: number, participant?: string) {
    let q = db
      .updateTable('conversations')
      .set({
        last_seq: sql`last_seq + 1`,
        last_at: sql`CASE WHEN last_at >= ${now} THEN last_at + 1 ELSE ${now} END`,
        updated_at: now,
      })
      .where('integration_id', '=', integrationId)
      .where('id', '=', conversationId)
    if (participant !== undefined) {
      q = q.where((eb) => eb.exists(eb.selectFrom('participants').select('user_id')
        .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('user_id', '=', participant)))
    }
    return q
  }

  private async nextSeq(trx: Db, integrationId: string, conversationId: string, now: number, participant?: string): Promise<{ seq: number; at: number } | undefined> {
    const r = await this.seqUpdate(trx, integrationId, conversationId, now, participant).returning(['last_seq', 'last_at']).executeTakeFirst()
    return r && { seq: Number(r.last_seq), at: Number(r.last_at) }
  }

  private async recordSignal(trx: Db, integrationId: string, conversationId: string, type: string, data: object, now: number): Promise<void> {
    const next = await this.nextSeq(trx, integrationId, conversationId, now)
    if (!next) return
    await trx
      .insertInto('conversation_signals')
      .values({ integration_id: integrationId, conversation_id: conversationId, seq: next.seq, type, data: JSON.stringify(data), created_at: next.at })
      .execute()
  }

  async addParticipant(integrationId: string, conversationId: string, userId: string, now: number): Promise<boolean> {
    return inRetriedTransaction(this.db, async (trx) => {
      const r = await trx
        .insertInto('participants')
        .values({ integration_id: integrationId, conversation_id: conversationId, user_id: userId, created_at: now })
        .onConflict((oc) => oc.columns(['integration_id', 'conversation_id', 'user_id']).doNothing())
        .executeTakeFirst()
      if (Number(r.numInsertedOrUpdatedRows ?? 0) === 0) return false
      await this.recordSignal(trx, integrationId, conversationId, 'participant_added', { conversationId, participantId: userId }, now)
      return true
    })
  }

  async removeParticipant(integrationId: string, conversationId: string, userId: string, now: number): Promise<boolean> {
    return inRetriedTransaction(this.db, async (trx) => {
      const r = await trx
        .deleteFrom('participants')
        .where('integration_id', '=', integrationId)
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      if (Number(r.numDeletedRows) === 0) return false
      await this.recordSignal(trx, integrationId, conversationId, 'participant_removed', { conversationId, participantId: userId }, now)
      return true
    })
  }

  async getParticipant(integrationId: string, conversationId: string, userId: string): Promise<UserRow | undefined> {
    const r = await this.db
      .selectFrom('participants as p')
      .innerJoin('users as u', (j) => j.onRef('u.integration_id', '=', 'p.integration_id').onRef('u.id', '=', 'p.user_id'))
      .selectAll('u')
      .where('p.integration_id', '=', integrationId)
      .where('p.conversation_id', '=', conversationId)
      .where('p.user_id', '=', userId)
      .executeTakeFirst()
    return r && toUser(r)
  }

  async listParticipants(integrationId: string, conversationId: string, page: PageRequest): Promise<Page<UserRow>> {
    let q = this.db
      .selectFrom('participants as p')
      .innerJoin('users as u', (j) => j.onRef('u.integration_id', '=', 'p.integration_id').onRef('u.id', '=', 'p.user_id'))
      .selectAll('u')
      .select('p.created_at as joined_at')
      .where('p.integration_id', '=', integrationId)
      .where('p.conversation_id', '=', conversationId)
    if (page.after !== undefined) {
      const [joinedAt, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('p.created_at', '>', joinedAt), eb.and([eb('p.created_at', '=', joinedAt), eb('u.id', '>', id)])]))
    }
    const rows = await q.orderBy('p.created_at', 'asc').orderBy('u.id', 'asc').limit(page.limit + 1).execute()
    const page_ = pageOf(rows, page.limit, (r) => [Number(r.joined_at), r.id])
    return { items: page_.items.map(toUser), next: page_.next }
  }

  // ---- messages and events ----
  appendMessage(m: NewMessage): Promise<Appended<MessageRow> | undefined> {
    return this.append('messages', m, messageColumns(m), (seq, at) => messageRow(m, seq, at), () => this.getMessage(m.integrationId, m.id), 'Message')
  }

  /**
   * An append in one transaction: the conversation's next seq, then the row (an `ifAbsent` append's taken id
   * inserts nothing and rolls the seq back; the stored row answers, see Appended).
   */
  private async append<T extends MessageRow | EventRow>(
    table: 'messages' | 'events', a: NewMessage | NewEvent, columns: ReturnType<typeof messageColumns> | ReturnType<typeof eventColumns>,
    row: (seq: number, at: number) => T, stored: () => Promise<T | undefined>, entity: 'Message' | 'Event',
  ): Promise<Appended<T> | undefined> {
    try {
      return await this.db.transaction().execute(async (trx): Promise<Appended<T> | undefined> => {
        const next = await this.nextSeq(trx, a.integrationId, a.conversationId, a.now, a.requireParticipant ? a.userId : undefined)
        if (!next) return undefined
        const insert = trx.insertInto(table).values({ ...columns, seq: next.seq, created_at: next.at })
        const r = await (a.ifAbsent ? insert.onConflict((oc) => oc.column('id').doNothing()) : insert).executeTakeFirst()
        if (Number(r.numInsertedOrUpdatedRows ?? 0) === 0) throw new IdTaken()
        return row(next.seq, next.at)
      })
    } catch (err) {
      if (!(err instanceof IdTaken)) throw err
      return takenAnswer(a, await stored(), entity)
    }
  }

  async getMessage(integrationId: string, id: string): Promise<MessageRow | undefined> {
    const r = await this.db.selectFrom('messages').selectAll().where('id', '=', id).where('integration_id', '=', integrationId).executeTakeFirst()
    return r && toMessage(r)
  }

  async deleteMessage(integrationId: string, id: string, now: number): Promise<MessageRow | undefined> {
    return inRetriedTransaction(this.db, async (trx) => {
      const r = await trx.deleteFrom('messages').where('id', '=', id).where('integration_id', '=', integrationId).returningAll().executeTakeFirst()
      if (!r) return undefined
      const message = toMessage(r)
      await this.recordSignal(trx, integrationId, message.conversationId, 'message_deleted', { id, conversationId: message.conversationId, userId: message.userId }, now)
      return message
    })
  }

  async listMessages(integrationId: string, conversationId: string, page: PageRequest): Promise<Page<MessageRow>> {
    let q = this.db.selectFrom('messages').selectAll().where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId)
    if (page.after !== undefined) {
      const [seq] = decodeCursor(page.after, ['number']) as [number]
      q = q.where('seq', '<', seq)
    }
    const rows = await q.orderBy('seq', 'desc').limit(page.limit + 1).execute()
    return pageOf(rows.map(toMessage), page.limit, (m) => [m.seq])
  }

  appendEvent(e: NewEvent): Promise<Appended<EventRow> | undefined> {
    return this.append('events', e, eventColumns(e), (seq, at) => eventRow(e, seq, at), () => this.getEvent(e.integrationId, e.id), 'Event')
  }

  async getEvent(integrationId: string, id: string): Promise<EventRow | undefined> {
    const r = await this.db.selectFrom('events').selectAll().where('id', '=', id).where('integration_id', '=', integrationId).executeTakeFirst()
    return r && toEvent(r)
  }

  async conversationsBehind(limit: number): Promise<{ integrationId: string; conversationId: string }[]> {
    const rows = await this.db.selectFrom('conversations').select(['integration_id', 'id']).whereRef('bot_seq', '<', 'last_seq').limit(limit).execute()
    return rows.map((r) => ({ integrationId: r.integration_id, conversationId: r.id }))
  }

  getBotCursor(integrationId: string, conversationId: string): Promise<{ botSeq: number; lastSeq: number } | undefined> {
    return this.botCursorIn(this.db, integrationId, conversationId)
  }

  private async botCursorIn(db: Db, integrationId: string, conversationId: string): Promise<{ botSeq: number; lastSeq: number } | undefined> {
    const r = await db.selectFrom('conversations').select(['bot_seq', 'last_seq']).where('integration_id', '=', integrationId).where('id', '=', conversationId).executeTakeFirst()
    return r && { botSeq: Number(r.bot_seq), lastSeq: Number(r.last_seq) }
  }

  async advanceBotCursor(integrationId: string, conversationId: string, seq: number): Promise<void> {
    await this.db.updateTable('conversations').set({ bot_seq: seq })
      .where('integration_id', '=', integrationId).where('id', '=', conversationId).where('bot_seq', '<', seq).execute()
  }

  async acquireBotLease(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    const r = await this.db.updateTable('conversations')
      .set({ bot_lease_owner: owner, bot_lease_until: now + ttlMs })
      .where('integration_id', '=', integrationId).where('id', '=', conversationId)
      .where((eb) => eb.or([eb('bot_lease_until', '<', now), eb('bot_lease_owner', '=', owner), eb('bot_lease_owner', 'is', null)]))
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  releaseBotLease(integrationId: string, conversationId: string, owner: string): Promise<void> {
    return this.releaseBotLeaseIn(this.db, integrationId, conversationId, owner)
  }

  private async releaseBotLeaseIn(db: Db, integrationId: string, conversationId: string, owner: string): Promise<void> {
    await db.updateTable('conversations').set({ bot_lease_owner: null, bot_lease_until: 0 })
      .where('integration_id', '=', integrationId).where('id', '=', conversationId).where('bot_lease_owner', '=', owner).execute()
  }

  async fastForwardBotCursors(botId: string): Promise<void> {
    await this.db.updateTable('conversations').set((eb) => ({ bot_seq: eb.ref('last_seq') }))
      .where('integration_id', 'in', (eb) => eb.selectFrom('integrations').select('id').where('bot_id', '=', botId))
      .execute()
  }

  async getBotStates(botId: string, keys: BotStateKey[]): Promise<(JsonObject | undefined)[]> {
    if (keys.length === 0) return []
    const rows = await this.db.selectFrom('bot_states').select(['scope', 'scope_id', 'data']).where('bot_id', '=', botId)
      .where((eb) => eb.or(keys.map((k) => eb.and([eb('scope', '=', k.scope), eb('scope_id', '=', k.scopeId)])))).execute()
    return keys.map((k) => {
      const row = rows.find((r) => r.scope === k.scope && r.scope_id === k.scopeId)
      return row ? (JSON.parse(row.data) as JsonObject) : undefined
    })
  }

  async saveBotStates(botId: string, entries: BotStateWrite[], now: number): Promise<void> {
    if (entries.length === 0) return
    await inRetriedTransaction(this.db, (trx) => this.writeBotStates(trx, botId, entries, now))
  }

  /**
   * Saves states inside `trx`: `data` replaces the row; `patch` is applied to the row as stored, which
   * PostgreSQL locks first (a turn of another conversation patching the same user or bot waits, then
   * applies its own keys to what this one wrote). An empty patch writes nothing.
   */
  private async writeBotStates(trx: Transaction<Database>, botId: string, entries: BotStateWrite[], now: number): Promise<void> {
    for (const e of entries) {
      let value: JsonObject
      if (e.patch) {
        if (isEmptyPatch(e.patch)) continue
        const pg = this.dialect === 'postgres'
        if (pg) {
          await trx.insertInto('bot_states').values({ bot_id: botId, scope: e.scope, scope_id: e.scopeId, data: '{}', updated_at: now })
            .onConflict((oc) => oc.columns(['bot_id', 'scope', 'scope_id']).doNothing()).execute()
        }
        const row = await trx.selectFrom('bot_states').select('data')
          .where('bot_id', '=', botId).where('scope', '=', e.scope).where('scope_id', '=', e.scopeId)
          .$if(pg, (qb) => qb.forUpdate()).executeTakeFirst()
        value = applyStatePatch(row ? (JSON.parse(row.data) as JsonObject) : undefined, e.patch)
      } else value = e.data
      const data = JSON.stringify(value)
      await trx.insertInto('bot_states').values({ bot_id: botId, scope: e.scope, scope_id: e.scopeId, data, updated_at: now })
        .onConflict((oc) => oc.columns(['bot_id', 'scope', 'scope_id']).doUpdateSet({ data, updated_at: now })).execute()
    }
  }

  async appendBotLogs(rows: BotLogRow[]): Promise<void> {
    if (rows.length === 0) return
    await this.db.insertInto('bot_logs')
      .values(rows.map((r) => ({ id: r.id, bot_id: r.botId, at: r.at, level: r.level, message: r.message, conversation_id: r.conversationId })))
      .execute()
  }

  async listBotLogs(botId: string, range: BotLogFilter, page: PageRequest): Promise<Page<BotLogRow>> {
    let q = this.db.selectFrom('bot_logs').selectAll().where('bot_id', '=', botId)
    if (range.level !== undefined) q = q.where('level', '=', range.level)
    if (range.conversationId !== undefined) q = q.where('conversation_id', '=', range.conversationId)
    if (range.from !== undefined) q = q.where('at', '>=', range.from)
    if (range.to !== undefined) q = q.where('at', '<=', range.to)
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('at', '>', at), eb.and([eb('at', '=', at), eb('id', '>', id)])]))
    }
    const rows = await q.orderBy('at').orderBy('id').limit(page.limit + 1).execute()
    const toLog = (r: (typeof rows)[number]): BotLogRow => ({
      id: r.id, botId: r.bot_id, at: Number(r.at), level: r.level, message: r.message, conversationId: r.conversation_id,
    })
    return pageOf(rows.map(toLog), page.limit, (l) => [l.at, l.id])
  }

  async signalsSince(integrationId: string, conversationId: string, afterSeq: number, limit: number): Promise<SignalRecord[]> {
    const scope = { integration_id: integrationId, conversation_id: conversationId }
    // Upper bound first: every signal up to the conversation's visible last_seq is committed (seqs are
    // taken under the conversation's row lock, so they commit in order). Without it, the three reads
    // below may see different commits on PostgreSQL (one snapshot per statement on a pool) and return
    // seq n+1 without seq n, and a stream would skip n for good.
    const bound = await this.db.selectFrom('conversations').select('last_seq')
      .where('integration_id', '=', integrationId).where('id', '=', conversationId).executeTakeFirst()
    if (!bound || Number(bound.last_seq) <= afterSeq) return []
    const upper = Number(bound.last_seq)
    const [messages, events, others] = await Promise.all([
      this.db.selectFrom('messages').selectAll().where('integration_id', '=', scope.integration_id).where('conversation_id', '=', scope.conversation_id)
        .where('seq', '>', afterSeq).where('seq', '<=', upper).orderBy('seq').limit(limit).execute(),
      this.db.selectFrom('events').selectAll().where('integration_id', '=', scope.integration_id).where('conversation_id', '=', scope.conversation_id)
        .where('seq', '>', afterSeq).where('seq', '<=', upper).orderBy('seq').limit(limit).execute(),
      this.db.selectFrom('conversation_signals').selectAll().where('integration_id', '=', scope.integration_id).where('conversation_id', '=', scope.conversation_id)
        .where('seq', '>', afterSeq).where('seq', '<=', upper).orderBy('seq').limit(limit).execute(),
    ])
    return mergeSignals(messages, events, others, limit)
  }

  async signalSeqBefore(integrationId: string, conversationId: string, before: number): Promise<number> {
    // Each table from its newest row backwards (its (integration, conversation, seq) index) to the first older one:
    // only the signals of the window are passed over.
    const last = (table: 'messages' | 'events' | 'conversation_signals') => this.db.selectFrom(table).select('seq')
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('created_at', '<', before)
      .orderBy('seq', 'desc').limit(1).executeTakeFirst()
    const rows = await Promise.all([last('messages'), last('events'), last('conversation_signals')])
    return Math.max(0, ...rows.map((r) => Number(r?.seq ?? 0)))
  }

  // ---- Bot runtime, batched (see the Store interface) ----
  // (types by import() so that this block stays self-contained for merges)

  async claimBotConversation(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<import('../store.js').BotCursor | undefined> {
    const r = await this.db.updateTable('conversations')
      .set({ bot_lease_owner: owner, bot_lease_until: now + ttlMs })
      .where('integration_id', '=', integrationId).where('id', '=', conversationId)
      .where((eb) => eb.or([eb('bot_lease_until', '<', now), eb('bot_lease_owner', '=', owner), eb('bot_lease_owner', 'is', null)]))
      .returning(['bot_seq', 'last_seq'])
      .executeTakeFirst()
    return r && { botSeq: Number(r.bot_seq), lastSeq: Number(r.last_seq) }
  }

  async finishBotTurn(turn: import('../store.js').BotTurnEnd): Promise<import('../store.js').BotCursor | undefined> {
    return inRetriedTransaction(this.db, async (trx) => {
      await this.writeBotStates(trx, turn.botId, turn.states, turn.now)
      if (turn.logs.length > 0) {
        await trx.insertInto('bot_logs')
          .values(turn.logs.map((r) => ({ id: r.id, bot_id: r.botId, at: r.at, level: r.level, message: r.message, conversation_id: r.conversationId })))
          .execute()
      }
      await trx.updateTable('conversations').set({ bot_seq: turn.seq })
        .where('integration_id', '=', turn.integrationId).where('id', '=', turn.conversationId).where('bot_seq', '<', turn.seq).execute()
      if (turn.lease) {
        await trx.updateTable('conversations').set({ bot_lease_until: turn.now + turn.lease.ttlMs })
          .where('integration_id', '=', turn.integrationId).where('id', '=', turn.conversationId).where('bot_lease_owner', '=', turn.lease.owner).execute()
      }
      if (turn.release === undefined) return undefined
      await this.releaseBotLeaseIn(trx, turn.integrationId, turn.conversationId, turn.release)
      return this.botCursorIn(trx, turn.integrationId, turn.conversationId)
    })
  }

  async releaseBotConversation(integrationId: string, conversationId: string, owner: string): Promise<import('../store.js').BotCursor | undefined> {
    await this.releaseBotLease(integrationId, conversationId, owner)
    return this.getBotCursor(integrationId, conversationId)
  }
}
