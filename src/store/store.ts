import type { KnowledgeStore } from './knowledge-store.js'
import type { PassageVectorStore } from './passage-vector-store.js'
import type { FileStore } from './file-store.js'
import type { WebhookStore } from './webhook-store.js'
import type { HandoffStore } from './handoff-store.js'
import type { IntegrationStore } from './integration-store.js'
import type { IntegrationOutboxStore } from './integration-outbox-store.js'
import type { RuntimeEventStore } from './runtime-event-store.js'
import type { StateStore } from './state-store.js'
import type { TelemetryStore } from './telemetry-store.js'
import type { WorkflowStore } from './workflow-store.js'
import type { RecurringEventStore } from './recurring-event-store.js'
import type { BotChatStore } from './bot-chat-store.js'
import type { TableStore } from './table-store.js'
import type { AnalyticsStore } from './analytics-store.js'
import type { QualityStore } from './quality-store.js'
import type { ConsoleSessionStore } from './console-session-store.js'
import type { ConversationArchiveStore } from './conversation-archive-store.js'
import type { PackageStore } from './package-store.js'
import type { LlmStore } from './llm-store.js'
import type {
  JsonObject, WorkspaceRow, AccountRow, AccessTokenRow, BotRow, IntegrationRow, UserRow, ConversationRow,
  MessageRow, EventRow, MemberRow, BotApiKeyRow, DeletedBot, BotListFilter, BotPatch, BotLogFilter, BotLogRow,
  BotStateKey, BotStateWrite, SignalRecord, PageRequest, Page, UniqueViolation, NewUser, UserPatch, NewMessage,
  NewEvent, Appended, BotCursor, BotTurnEnd,
} from './rows.js'

export * from './rows.js'

/**
 * The Store: every read and write Parley makes to its database, behind one interface so that the
 * embedded SQLite engine and PostgreSQL share the domain code and one contract suite.
 * Timestamps are milliseconds since the epoch; the HTTP layer renders them as ISO 8601.
 * Methods that must be atomic (a message and its conversation sequence, a conversation and its
 * owner) are atomic inside the store, so the domain never handles transactions.
 */
export interface Store {
  readonly dialect: 'sqlite' | 'postgres'
  /** File metadata (Files API). */
  readonly files: FileStore
  /** Knowledge bases and the full-text passage index. */
  readonly knowledge: KnowledgeStore
  /** Embedding vectors of knowledge passages (hybrid retrieval with an embeddings service). */
  readonly passageVectors: PassageVectorStore
  /** The webhook integration's delivery queue. */
  readonly webhooks: WebhookStore
  /** Human handoffs and the agents' notes (handoff-store.ts). */
  readonly handoffs: HandoffStore
  /** Integrations served elsewhere: definitions, their API keys, installations, logs. */
  readonly integrations: IntegrationStore
  /** Outgoing delivery to those integrations: a cursor and a lease per conversation over its log (integration-outbox-store.ts). */
  readonly integrationOutbox: IntegrationOutboxStore
  /** Runtime API states and the bots' state declarations. */
  readonly states: StateStore
  /** Runtime API events: scheduled, bot-level and state_expired events, and their delivery queue. */
  readonly runtimeEvents: RuntimeEventStore
  /** Runtime API workflows (their workflow_update events go through runtimeEvents). */
  readonly workflows: WorkflowStore
  /** A bot definition's recurring (cron) events. */
  readonly recurringEvents: RecurringEventStore
  /** trackAnalytics counters, captureObservation records, configureIntegration registrations. */
  readonly telemetry: TelemetryStore
  /** The Runtime API's view of the chat data: tags, bot-wide filtered lists (bot-chat-store.ts). */
  readonly botChat: BotChatStore
  /** The Tables API: a bot's tables, their rows and jobs (table-store.ts). */
  readonly tables: TableStore
  /** getBotAnalytics' counts per day over the other parts' data (analytics-store.ts). */
  readonly analytics: AnalyticsStore
  /** Failed turns and knowledge searches, as the bot runtime records them (quality-store.ts). */
  readonly quality: QualityStore
  /** Console browser sessions and one-time sign-in links (console-session-store.ts). */
  readonly consoleSessions: ConsoleSessionStore
  /** The console's conversation search and paged exports (conversation-archive-store.ts). */
  readonly conversationArchive: ConversationArchiveStore
  /** Workspace handles, interface and plugin definitions, bots' plugins and CommonJS bundles (package-store.ts). */
  readonly packages: PackageStore
  /** Calls through the LLM gateway, daily spend and budgets (llm-store.ts). */
  readonly llm: LlmStore
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>
  /**
   * Runs `fn` while holding the database-wide lock `name`, so that instances sharing the database
   * do it one at a time (first-start bootstrap). PostgreSQL: an advisory lock; SQLite has one process.
   */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>
  close(): Promise<void>

  // Workspaces, accounts, tokens (bootstrap now; the Admin API builds on these)
  createWorkspace(row: WorkspaceRow): Promise<void>
  /** Throws UniqueViolation, inserting nothing, when the id or the email is taken. */
  createAccount(row: AccountRow): Promise<void>
  /** Throws UniqueViolation, changing nothing, when the account is already a member. */
  addWorkspaceMember(workspaceId: string, accountId: string, role: string, now: number): Promise<void>
  /**
   * A new account with its first access token and its membership of a workspace, all or nothing:
   * whoever sees the account sees the membership too. Throws UniqueViolation, inserting nothing,
   * when the account's id or email is taken.
   */
  createMemberAccount(account: AccountRow, token: AccessTokenRow & { tokenHash: string }, workspaceId: string, role: string): Promise<void>
  createAccessToken(row: AccessTokenRow & { tokenHash: string }): Promise<void>
  findAccessTokenByHash(tokenHash: string): Promise<AccessTokenRow | undefined>
  countWorkspaces(): Promise<number>

  getAccount(id: string): Promise<AccountRow | undefined>
  getAccountByEmail(email: string): Promise<AccountRow | undefined>
  listAccessTokens(accountId: string): Promise<AccessTokenRow[]>
  deleteAccessToken(accountId: string, id: string): Promise<boolean>
  getWorkspace(id: string): Promise<WorkspaceRow | undefined>
  listWorkspacesOf(accountId: string, page: PageRequest): Promise<Page<WorkspaceRow>>
  updateWorkspace(id: string, name: string, now: number): Promise<WorkspaceRow | undefined>
  deleteWorkspace(id: string): Promise<boolean>
  countBots(workspaceId: string): Promise<number>
  getMember(workspaceId: string, accountId: string): Promise<MemberRow | undefined>
  listMembers(workspaceId: string, page: PageRequest): Promise<Page<MemberRow>>
  updateMemberRole(workspaceId: string, accountId: string, role: string, now: number): Promise<MemberRow | undefined>
  removeMember(workspaceId: string, accountId: string): Promise<boolean>

  // Bots and their integrations
  createBot(bot: BotRow, integrations: IntegrationRow[]): Promise<void>
  getBot(id: string): Promise<BotRow | undefined>
  listBots(filter: BotListFilter, page: PageRequest): Promise<Page<BotRow>>
  updateBot(id: string, patch: BotPatch, now: number): Promise<BotRow | undefined>
  /**
   * Deletes the bot and everything of it in the database (cascade); undefined when there was no such bot.
   * Returns what the deleted rows referenced outside the database, listed in the deleting transaction,
   * so that nothing written concurrently (a webhook delivery queued while the bot was deleted) is missed.
   */
  deleteBot(id: string): Promise<DeletedBot | undefined>
  getIntegrationByWebhookId(webhookId: string): Promise<IntegrationRow | undefined>
  getIntegration(id: string): Promise<IntegrationRow | undefined>
  listIntegrations(botId: string): Promise<IntegrationRow[]>
  createIntegration(row: IntegrationRow): Promise<void>
  updateIntegration(id: string, patch: { enabled?: boolean; encryptionKey?: string; configuration?: JsonObject }, now: number): Promise<void>
  createBotApiKey(row: BotApiKeyRow & { tokenHash: string }): Promise<void>
  listBotApiKeys(botId: string): Promise<BotApiKeyRow[]>
  deleteBotApiKey(botId: string, id: string): Promise<boolean>
  findBotApiKeyByHash(tokenHash: string): Promise<BotApiKeyRow | undefined>
  getBotApiKey(id: string): Promise<BotApiKeyRow | undefined>
  /** Instance-wide setting, created once: concurrent first calls all get the same winner's value. */
  getOrCreateSetting(key: string, create: () => string): Promise<string>

  // Chat users and keys
  createUser(user: NewUser): Promise<UserRow>
  /** Returns the user, creating it when missing; `created` tells which. */
  getOrCreateUser(user: NewUser): Promise<{ user: UserRow; created: boolean }>
  getUser(integrationId: string, id: string): Promise<UserRow | undefined>
  updateUser(integrationId: string, id: string, patch: UserPatch, now: number): Promise<UserRow | undefined>
  deleteUser(integrationId: string, id: string): Promise<boolean>
  addUserKey(integrationId: string, userId: string, keyHash: string, now: number): Promise<void>
  findUserByKeyHash(integrationId: string, keyHash: string): Promise<UserRow | undefined>

  // Conversations and participants
  /** Creates the conversation with its owner as first participant. */
  createConversation(integrationId: string, id: string, ownerId: string, now: number): Promise<ConversationRow>
  getConversation(integrationId: string, id: string): Promise<ConversationRow | undefined>
  deleteConversation(integrationId: string, id: string): Promise<boolean>
  listConversationsOf(integrationId: string, userId: string, page: PageRequest): Promise<Page<ConversationRow>>
  isParticipant(integrationId: string, conversationId: string, userId: string): Promise<boolean>
  /** The conversation and whether the user takes part in it, in one round trip (the hot path's access check). */
  getConversationFor(integrationId: string, conversationId: string, userId: string): Promise<{ conversation: ConversationRow; isParticipant: boolean } | undefined>
  /** Adds the participant and records a participant_added signal; false if already present. */
  addParticipant(integrationId: string, conversationId: string, userId: string, now: number): Promise<boolean>
  removeParticipant(integrationId: string, conversationId: string, userId: string, now: number): Promise<boolean>
  getParticipant(integrationId: string, conversationId: string, userId: string): Promise<UserRow | undefined>
  listParticipants(integrationId: string, conversationId: string, page: PageRequest): Promise<Page<UserRow>>

  // Messages and events: each takes the next conversation sequence number atomically
  /**
   * True when an append sends its `notify` itself, in the same statement as the write, so that a
   * notification goes out exactly when its append commits (PostgreSQL NOTIFY, when the pub/sub
   * listens on the same database). Otherwise the caller publishes them after the append.
   */
  readonly sendsAppendNotifications: boolean
  /** The append's one caller is the domain's ConversationLog (src/domain/conversation-log.ts). */
  appendMessage(message: NewMessage): Promise<Appended<MessageRow> | undefined>
  getMessage(integrationId: string, id: string): Promise<MessageRow | undefined>
  deleteMessage(integrationId: string, id: string, now: number): Promise<MessageRow | undefined>
  listMessages(integrationId: string, conversationId: string, page: PageRequest): Promise<Page<MessageRow>>
  appendEvent(event: NewEvent): Promise<Appended<EventRow> | undefined>
  getEvent(integrationId: string, id: string): Promise<EventRow | undefined>

  // Bot runtime
  /** Conversations whose bot cursor is behind their sequence (work left after a restart). */
  conversationsBehind(limit: number): Promise<{ integrationId: string; conversationId: string }[]>
  getBotCursor(integrationId: string, conversationId: string): Promise<{ botSeq: number; lastSeq: number } | undefined>
  /** Moves the cursor forward (never back). */
  advanceBotCursor(integrationId: string, conversationId: string, seq: number): Promise<void>
  /**
   * Takes (or renews) the right to run this conversation's turns until `now + ttlMs`: true when
   * granted, false while another owner's lease is live. One instance at a time runs a conversation.
   */
  acquireBotLease(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<boolean>
  releaseBotLease(integrationId: string, conversationId: string, owner: string): Promise<void>
  /** Marks everything already in the bot's conversations as processed (first deploy: history is not replayed). */
  fastForwardBotCursors(botId: string): Promise<void>
  getBotStates(botId: string, keys: BotStateKey[]): Promise<(JsonObject | undefined)[]>
  saveBotStates(botId: string, entries: BotStateWrite[], now: number): Promise<void>
  appendBotLogs(rows: BotLogRow[]): Promise<void>
  /** Oldest first within [from, to]; `after` pages forward. */
  listBotLogs(botId: string, range: BotLogFilter, page: PageRequest): Promise<Page<BotLogRow>>

  /** Signals with seq > afterSeq in order, at most `limit`. */
  signalsSince(integrationId: string, conversationId: string, afterSeq: number, limit: number): Promise<SignalRecord[]>
  /**
   * The sequence number of the conversation's last signal written before `before` (ms since the epoch), 0 when
   * none (or no such conversation): a stream that starts after it also gets every signal written since then.
   */
  signalSeqBefore(integrationId: string, conversationId: string, before: number): Promise<number>

  // ---- Bot runtime, batched: the steps of a bot turn in one round trip (or transaction) each ----
  /** acquireBotLease, then the cursor: undefined when the lease is not granted (or no such conversation). */
  claimBotConversation(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<BotCursor | undefined>
  /**
   * The end of a turn in one transaction: its states saved, its logs appended, the cursor moved to
   * `seq` (never back) and, with `lease`, the lease renewed while `lease.owner` still holds it. With
   * `release` (the last turn of a drain), the lease is then let go as releaseBotConversation does, in the
   * same transaction, and the cursor is returned; undefined otherwise.
   */
  finishBotTurn(turn: BotTurnEnd): Promise<BotCursor | undefined>
  /** releaseBotLease, then the cursor (work that arrived meanwhile shows as botSeq < lastSeq). */
  releaseBotConversation(integrationId: string, conversationId: string, owner: string): Promise<BotCursor | undefined>
}
