import { createHash } from 'node:crypto'
import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import type { PubSub } from '../pubsub/pubsub.js'
import type {
  BotChatMessage, BotChatUser, DateField, SortDirection, TagKind, TagPatch, Tags,
} from '../store/bot-chat-store.js'
import { UniqueViolation, type BotRow, type EventRow, type IntegrationRow, type JsonObject, type MessageRow, type Page, type Store, type UserRow } from '../store/store.js'
import type { ChatService } from './chat-service.js'
import { conversationChanged, publishChange } from './conversation-log.js'
import type { ConversationLog, Logged } from './conversation-log.js'
import { normalizePayload } from './payloads.js'
import { chatShapeOf, type ChatShape } from './message-shapes.js'
import type { RuntimeConversation } from './runtime-views.js'

/**
 * The Runtime API's caller when it is an integration (its API key): the bot, seen through that one
 * installation (users, conversations and messages of its integration only).
 */
export type IntegrationScopedBot = BotRow & { readonly integrationScope?: IntegrationRow }
export const integrationScope = (bot: BotRow): IntegrationRow | undefined => (bot as IntegrationScopedBot).integrationScope

/** What an installed integration does when the bot creates its users, conversations and messages (IntegrationOperations). */
export interface IntegrationCreation {
  /** The id of the user the integration created (create_user), or undefined: Parley creates it. */
  createUser(bot: BotRow, integration: IntegrationRow, tags: Tags): Promise<string | undefined>
  /** The id of the conversation the integration created (create_conversation), or undefined: Parley creates it. */
  createConversation(bot: BotRow, integration: IntegrationRow, channel: string, tags: Tags): Promise<string | undefined>
  /** Refuses (400) a message of a type the channel does not declare, and (400, logged) one on a channel disabled in the installation. */
  beforeMessage(integration: IntegrationRow, conversationId: string, channel: string | undefined, type: string): Promise<void>
}

/** Integrations that are never installations (their users and conversations are Parley's own). */
const BUILT_IN = new Set(['chat', 'webhook'])

/** Runtime API list sizes (`pageSize`). */
export const RUNTIME_PAGE_SIZE = { default: 20, max: 100 } as const
/** Bounds of tag, property and attribute maps (400 beyond). */
export const TAG_LIMITS = { maxEntries: 50, maxKeyLength: 100, maxValueLength: 1000 } as const
/** importMessages: at most this many messages per call. */
export const MAX_IMPORT_MESSAGES = 100
const MAX_ID_LENGTH = 200

export interface BotChatServiceOptions {
  /** The Chat API's payload rules (src/http/schemas/validate-payload.ts). */
  validatePayload: (payload: unknown) => string | undefined
  clock?: () => number
  /**
   * getOrCreate critical sections running at once on this instance. On PostgreSQL each holds a pool
   * connection for its lock and uses another for its queries: keep this at most (pool size - 1) / 2,
   * so that lock holders can never take the whole pool and wait on each other.
   */
  maxConcurrentCreates?: number
  /** Told about every bot message appended (an installed integration sends it out: message_created). */
  onOutgoing?: (integration: IntegrationRow, message: MessageRow) => void
  /** Installed integrations' create_user / create_conversation and disabled channels (src/runtime/integration-operations.ts). */
  operations?: IntegrationCreation
}

export interface UserInput {
  tags: Tags
  integrationName?: string | undefined
  name?: string | undefined
  pictureUrl?: string | undefined
  properties?: Tags | undefined
  attributes?: Tags | undefined
}
export interface UserUpdate {
  tags?: TagPatch | undefined
  name?: string | null | undefined
  pictureUrl?: string | null | undefined
  properties?: TagPatch | undefined
  attributes?: TagPatch | undefined
}
export interface ConversationInput { channel: string; tags: Tags; integrationName?: string | undefined; properties?: Tags | undefined }
export interface MessageInput {
  type: string
  payload: JsonObject
  userId: string
  conversationId: string
  tags: Tags
  schedule?: { dateTime?: string | undefined; delay?: number | undefined } | undefined
  origin?: string | undefined
}
export interface ListUsersQuery {
  nextToken?: string | undefined; pageSize?: number | undefined; conversationId?: string | undefined; tags?: Tags | undefined
  afterDate?: string | undefined; beforeDate?: string | undefined; rangeField?: DateField | undefined; sortField?: DateField | undefined; sortDirection?: SortDirection | undefined
}
export interface ListConversationsQuery {
  nextToken?: string | undefined; pageSize?: number | undefined; sortField?: DateField | undefined; sortDirection?: SortDirection | undefined
  tags?: Tags | undefined; participantIds?: string[] | undefined; integrationName?: string | undefined; channel?: string | undefined
  afterDate?: string | undefined; beforeDate?: string | undefined; minMessageCount?: number | undefined; maxMessageCount?: number | undefined
}
export interface ListMessagesQuery {
  nextToken?: string | undefined; pageSize?: number | undefined; conversationId?: string | undefined; tags?: Tags | undefined
  afterDate?: string | undefined; beforeDate?: string | undefined
}
export interface Created<T> { value: T; created: boolean }

/** A string every engine stores and compares (PostgreSQL refuses NUL and lone surrogates). */
const storable = (s: string) => !s.includes('\u0000') && s.isWellFormed()

/** Checks a tag/property map; null values only where `nulls` (updates). */
export function checkStringMap(map: Record<string, string | null> | undefined, what: string, nulls = false): void {
  if (map === undefined) return
  const entries = Object.entries(map)
  if (entries.length > TAG_LIMITS.maxEntries) throw errors.invalidPayload(`${what}: at most ${TAG_LIMITS.maxEntries} keys`)
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > TAG_LIMITS.maxKeyLength || !storable(key)) {
      throw errors.invalidPayload(`${what}: keys must be 1 to ${TAG_LIMITS.maxKeyLength} characters`)
    }
    if (value === null) {
      if (!nulls) throw errors.invalidPayload(`${what}.${key} must be a string`)
      continue
    }
    if (typeof value !== 'string' || value.length > TAG_LIMITS.maxValueLength || !storable(value)) {
      throw errors.invalidPayload(`${what}.${key} must be a string of at most ${TAG_LIMITS.maxValueLength} characters`)
    }
  }
}

/** Non-null, non-empty entries (what a create stores). */
const setEntries = (map: Record<string, string | null> | undefined): Tags =>
  Object.fromEntries(Object.entries(map ?? {}).filter((e): e is [string, string] => e[1] !== null && e[1] !== ''))

function parseDate(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined
  const ms = Date.parse(value)
  if (!Number.isFinite(ms)) throw errors.invalidQuery(`${what} must be an ISO 8601 date`)
  return ms
}

const pageSize = (n: number | undefined) => Math.min(Math.max(n ?? RUNTIME_PAGE_SIZE.default, 1), RUNTIME_PAGE_SIZE.max)

/** The tags a getOrCreate looks for: `discriminateByTags` (each must be given a value) or every given tag. */
function discriminator(tags: Record<string, string | null>, discriminateByTags: string[] | undefined): Tags {
  const given = setEntries(tags)
  if (discriminateByTags === undefined) return given
  const out: Tags = {}
  for (const key of discriminateByTags) {
    const value = given[key]
    if (value === undefined) throw errors.invalidPayload(`discriminateByTags: tag "${key}" has no value in tags`)
    out[key] = value
  }
  return out
}

const digest = (parts: unknown) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url')

/**
 * A bot's chat data as the Runtime API sees it: users, conversations, participants and messages of
 * the bot's integrations, with tags. Creates go to the `chat` integration unless `integrationName` says otherwise;
 * lists span all of the bot's integrations (listConversations: one with `integrationName`), as Botpress Cloud's do.
 * The same rows as the Chat API's: a user's message appends through ChatService (hooks, the bot's
 * turn); the bot's own messages append here (appendOutgoing), and both reach the conversation's
 * stream. Used by the Runtime API routes, the sandboxed bot's client and remote-bot delivery.
 *
 * The bot's user: every integration has a user whose id is the bot id (is_bot). Messages by that
 * user are the bot's ('outgoing'); any other user's are 'incoming'.
 */
export class BotChatService {
  private readonly clock: () => number

  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly log: ConversationLog,
    private readonly chat: ChatService,
    private readonly options: BotChatServiceOptions,
  ) {
    this.clock = options.clock ?? Date.now
  }

  // ---- integrations ----

  /** The integration named `name` (default `chat`) of the bot: 404 when the bot has none of that name. */
  async integration(bot: BotRow, name?: string): Promise<IntegrationRow> {
    // An integration calling with its own key sees its own installation only.
    const scope = integrationScope(bot)
    if (scope) {
      if (name !== undefined && name !== scope.name) throw errors.notFound('Integration', name)
      return scope
    }
    const wanted = name ?? 'chat'
    const found = (await this.store.listIntegrations(bot.id)).find((i) => i.name === wanted)
    if (!found) throw errors.notFound('Integration', wanted)
    return found
  }

  /** Where ids are looked up and what lists span: the bot's integrations, chat first (an integration's key: its own). */
  private async integrations(bot: BotRow): Promise<IntegrationRow[]> {
    const scope = integrationScope(bot)
    if (scope) return [scope]
    const all = await this.store.listIntegrations(bot.id)
    return [...all.filter((i) => i.name === 'chat'), ...all.filter((i) => i.name !== 'chat')]
  }

  private async withName<T extends { integrationId: string }>(bot: BotRow, row: T): Promise<T & { integrationName: string }> {
    const integration = (await this.store.listIntegrations(bot.id)).find((i) => i.id === row.integrationId)
    return { ...row, integrationName: integration?.name ?? 'chat' }
  }

  private creating = 0
  private readonly waitingCreators: (() => void)[] = []

  /** getOrCreate: one creator at a time per discriminator, cluster-wide (Store.withLock), so concurrent identical calls create one row. */
  private async once<T>(kind: string, integrationId: string, key: unknown, fn: () => Promise<T>): Promise<T> {
    const max = Math.max(1, this.options.maxConcurrentCreates ?? 4)
    while (this.creating >= max) await new Promise<void>((resolve) => this.waitingCreators.push(resolve))
    this.creating++
    try {
      return await this.store.withLock(`runtime:${kind}:${integrationId}:${digest(key)}`, fn)
    } finally {
      this.creating--
      this.waitingCreators.shift()?.()
    }
  }

  private notify(integrationId: string, conversationId: string, message?: 'deleted'): Promise<void> {
    return publishChange(this.pubsub, integrationId, conversationId, message)
  }

  // ---- users ----

  async createUser(bot: BotRow, input: UserInput): Promise<BotChatUser> {
    this.checkUserInput(input)
    const integration = await this.integration(bot, input.integrationName)
    const made = await this.options.operations?.createUser(bot, integration, setEntries(input.tags))
    if (made !== undefined) return this.createdByIntegration(bot, integration, 'User', made, () => this.store.botChat.getUser([integration.id], made))
    return this.insertUser(integration, uuidv7(), input)
  }

  /** A user or conversation an installed integration created for the bot (create_user / create_conversation): it must be that integration's. */
  private async createdByIntegration<T>(bot: BotRow, integration: IntegrationRow, kind: string, id: string, find: () => Promise<T | undefined>): Promise<T> {
    const found = this.validId(id) ? await find() : undefined
    if (!found) throw errors.runtime(`Integration "${integration.name}" answered ${kind.toLowerCase()} "${id.slice(0, 100)}", which is not one of its ${kind.toLowerCase()}s in bot ${bot.id}`)
    return found
  }

  private checkUserInput(input: UserInput | UserUpdate): void {
    checkStringMap(input.tags, 'tags', true)
    checkStringMap(input.properties, 'properties', true)
    checkStringMap(input.attributes, 'attributes', true)
  }

  private async insertUser(integration: IntegrationRow, id: string, input: UserInput): Promise<BotChatUser> {
    try {
      return await this.store.botChat.createUser({
        integrationId: integration.id, id, name: input.name ?? null, pictureUrl: input.pictureUrl ?? null, isBot: false, now: this.clock(),
        tags: setEntries(input.tags), properties: setEntries(input.properties), attributes: setEntries(input.attributes),
      })
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('User', id)
      throw err
    }
  }

  async getUser(bot: BotRow, id: string): Promise<BotChatUser> {
    const user = this.validId(id) ? await this.store.botChat.getUser((await this.integrations(bot)).map((i) => i.id), id) : undefined
    if (!user) throw errors.notFound('User', id)
    return user
  }

  async getOrCreateUser(bot: BotRow, input: UserInput & { discriminateByTags?: string[] | undefined }): Promise<Created<BotChatUser>> {
    this.checkUserInput(input)
    const integration = await this.integration(bot, input.integrationName)
    const match = discriminator(input.tags, input.discriminateByTags)
    if (this.options.operations && !integrationScope(bot) && !BUILT_IN.has(integration.name) && !(await this.store.botChat.findUser(integration.id, match))) {
      // Outside any lock: the integration creates it through the Runtime API (its own getOrCreateUser).
      const made = await this.options.operations.createUser(bot, integration, setEntries(input.tags))
      if (made !== undefined) return { value: await this.createdByIntegration(bot, integration, 'User', made, () => this.store.botChat.getUser([integration.id], made)), created: true }
    }
    return this.once('user', integration.id, match, async () => {
      const existing = await this.store.botChat.findUser(integration.id, match)
      if (existing) return { value: existing, created: false }
      return { value: await this.insertUser(integration, uuidv7(), input), created: true }
    })
  }

  async updateUser(bot: BotRow, id: string, patch: UserUpdate): Promise<BotChatUser> {
    this.checkUserInput(patch)
    const user = await this.getUser(bot, id)
    const updated = await this.store.botChat.updateUser(user.integrationId, id, patch, this.clock())
    await this.chat.userChanged(user.integrationId, id)
    if (!updated) throw errors.notFound('User', id)
    return updated
  }

  async deleteUser(bot: BotRow, id: string): Promise<void> {
    const user = await this.getUser(bot, id)
    if (user.isBot) throw errors.invalidPayload('The bot\'s own user cannot be deleted')
    await this.chat.deleteUser(user)
  }

  async listUsers(bot: BotRow, q: ListUsersQuery): Promise<Page<BotChatUser>> {
    checkStringMap(q.tags, 'tags')
    return this.store.botChat.listUsers({
      integrationIds: (await this.integrations(bot)).map((i) => i.id), conversationId: q.conversationId, tags: q.tags,
      afterDate: parseDate(q.afterDate, 'afterDate'), beforeDate: parseDate(q.beforeDate, 'beforeDate'),
      rangeField: q.rangeField ?? 'createdAt', sortField: q.sortField ?? 'createdAt', sortDirection: q.sortDirection ?? 'desc',
    }, { after: q.nextToken, limit: pageSize(q.pageSize) })
  }

  // ---- conversations ----

  private checkConversationInput(input: { channel?: string; tags?: Record<string, string | null> | undefined; properties?: Record<string, string | null> | undefined }): void {
    if (input.channel !== undefined && (input.channel.length === 0 || input.channel.length > 100 || !storable(input.channel))) {
      throw errors.invalidPayload('channel must be 1 to 100 characters')
    }
    checkStringMap(input.tags, 'tags', true)
    checkStringMap(input.properties, 'properties', true)
  }

  async createConversation(bot: BotRow, input: ConversationInput): Promise<RuntimeConversation> {
    this.checkConversationInput(input)
    const integration = await this.integration(bot, input.integrationName)
    const made = await this.options.operations?.createConversation(bot, integration, input.channel, setEntries(input.tags))
    if (made !== undefined) return this.createdByIntegration(bot, integration, 'Conversation', made, async () => {
      const c = await this.store.botChat.getConversation([integration.id], made)
      return c && this.withName(bot, c)
    })
    return this.insertConversation(bot, integration, input)
  }

  private async insertConversation(bot: BotRow, integration: IntegrationRow, input: ConversationInput): Promise<RuntimeConversation> {
    const conversation = await this.store.botChat.createConversation({
      integrationId: integration.id, id: uuidv7(), channel: input.channel, tags: setEntries(input.tags), properties: setEntries(input.properties), now: this.clock(),
    })
    return this.withName(bot, conversation)
  }

  async getConversation(bot: BotRow, id: string): Promise<RuntimeConversation> {
    const conversation = this.validId(id) ? await this.store.botChat.getConversation((await this.integrations(bot)).map((i) => i.id), id) : undefined
    if (!conversation) throw errors.notFound('Conversation', id)
    return this.withName(bot, conversation)
  }

  async getOrCreateConversation(bot: BotRow, input: ConversationInput & { discriminateByTags?: string[] | undefined }): Promise<Created<RuntimeConversation>> {
    this.checkConversationInput(input)
    const integration = await this.integration(bot, input.integrationName)
    const match = discriminator(input.tags, input.discriminateByTags)
    if (this.options.operations && !integrationScope(bot) && !BUILT_IN.has(integration.name) && !(await this.store.botChat.findConversation(integration.id, input.channel, match))) {
      const made = await this.options.operations.createConversation(bot, integration, input.channel, setEntries(input.tags))
      if (made !== undefined) {
        const value = await this.createdByIntegration(bot, integration, 'Conversation', made, async () => {
          const c = await this.store.botChat.getConversation([integration.id], made)
          return c && this.withName(bot, c)
        })
        return { value, created: true }
      }
    }
    return this.once('conversation', integration.id, [input.channel, match], async () => {
      const existing = await this.store.botChat.findConversation(integration.id, input.channel, match)
      if (existing) return { value: await this.withName(bot, existing), created: false }
      return { value: await this.insertConversation(bot, integration, input), created: true }
    })
  }

  async updateConversation(bot: BotRow, id: string, patch: { tags?: TagPatch | undefined; properties?: TagPatch | undefined }): Promise<RuntimeConversation> {
    this.checkConversationInput(patch)
    const conversation = await this.getConversation(bot, id)
    const updated = await this.store.botChat.updateConversation(conversation.integrationId, id, patch, this.clock())
    if (!updated) throw errors.notFound('Conversation', id)
    return this.withName(bot, updated)
  }

  async deleteConversation(bot: BotRow, id: string): Promise<void> {
    const conversation = await this.getConversation(bot, id)
    await this.store.deleteConversation(conversation.integrationId, id)
    await this.notify(conversation.integrationId, id, 'deleted')
  }

  async listConversations(bot: BotRow, q: ListConversationsQuery): Promise<Page<RuntimeConversation>> {
    checkStringMap(q.tags, 'tags')
    for (const [name, n] of [['minMessageCount', q.minMessageCount], ['maxMessageCount', q.maxMessageCount]] as const) {
      if (n !== undefined && (!Number.isSafeInteger(n) || n < 0)) throw errors.invalidQuery(`${name} must be a non-negative integer`)
    }
    // Without integrationName: across all of the bot's integrations, as Botpress Cloud lists them.
    const integrations = q.integrationName !== undefined ? [await this.integration(bot, q.integrationName)] : await this.integrations(bot)
    // An unknown participant id matches nothing (rather than being dropped from the filter).
    if (q.participantIds?.some((p) => !this.validId(p))) return { items: [] }
    const page = await this.store.botChat.listConversations({
      integrationIds: integrations.map((i) => i.id), tags: q.tags, participantIds: q.participantIds, channel: q.channel,
      afterDate: parseDate(q.afterDate, 'afterDate'), beforeDate: parseDate(q.beforeDate, 'beforeDate'),
      minMessageCount: q.minMessageCount, maxMessageCount: q.maxMessageCount,
      sortField: q.sortField ?? 'createdAt', sortDirection: q.sortDirection ?? 'desc',
    }, { after: q.nextToken, limit: pageSize(q.pageSize) })
    const names = new Map(integrations.map((i) => [i.id, i.name]))
    return { items: page.items.map((c) => ({ ...c, integrationName: names.get(c.integrationId) ?? 'chat' })), next: page.next }
  }

  // ---- participants ----

  async listParticipants(bot: BotRow, conversationId: string, q: { nextToken?: string | undefined; pageSize?: number | undefined }): Promise<Page<BotChatUser>> {
    const conversation = await this.getConversation(bot, conversationId)
    const page = await this.store.listParticipants(conversation.integrationId, conversationId, { after: q.nextToken, limit: pageSize(q.pageSize) })
    return { items: await this.store.botChat.getUsers(conversation.integrationId, page.items.map((u) => u.id)), next: page.next }
  }

  async addParticipant(bot: BotRow, conversationId: string, userId: string): Promise<BotChatUser> {
    const conversation = await this.getConversation(bot, conversationId)
    const [user] = this.validId(userId) ? await this.store.botChat.getUsers(conversation.integrationId, [userId]) : []
    if (!user) throw errors.notFound('User', userId)
    if (await this.store.addParticipant(conversation.integrationId, conversationId, userId, this.clock())) {
      await this.notify(conversation.integrationId, conversationId)
    }
    return user
  }

  async getParticipant(bot: BotRow, conversationId: string, userId: string): Promise<BotChatUser> {
    const conversation = await this.getConversation(bot, conversationId)
    const participant = this.validId(userId) && (await this.store.isParticipant(conversation.integrationId, conversationId, userId))
    const [user] = participant ? await this.store.botChat.getUsers(conversation.integrationId, [userId]) : []
    if (!user) throw errors.notFound('Participant', userId)
    return user
  }

  async removeParticipant(bot: BotRow, conversationId: string, userId: string): Promise<void> {
    const conversation = await this.getConversation(bot, conversationId)
    // The Chat API's rule: a conversation's owner stays in it (Runtime-created conversations have none).
    if (conversation.ownerId === userId) throw errors.invalidPayload('The owner of a conversation cannot be removed from it')
    if (!this.validId(userId) || !(await this.store.removeParticipant(conversation.integrationId, conversationId, userId, this.clock()))) {
      throw errors.notFound('Participant', userId)
    }
    await this.notify(conversation.integrationId, conversationId)
  }

  // ---- messages ----

  /** The Runtime API's message in the chat shape it is stored in (src/domain/message-shapes.ts), checked. */
  private checkMessage(input: { type: string; payload: JsonObject; tags?: Record<string, string | null> | undefined }): ChatShape {
    checkStringMap(input.tags, 'tags', true)
    const message = chatShapeOf(input.type, input.payload)
    const problem = this.options.validatePayload(message.payload)
    if (problem) throw errors.invalidPayload(problem)
    return message
  }

  /**
   * createMessage: by the bot's user (id = the bot id) an outgoing message, appended here; by any other
   * user an incoming one, appended by ChatService as a Chat API message is (the bot's hook, a turn).
   */
  async createMessage(bot: BotRow, input: MessageInput): Promise<BotChatMessage> {
    if (input.schedule !== undefined) throw errors.invalidPayload('schedule is not supported on Parley: create the message when it is due')
    const message = this.checkMessage(input)
    const conversation = await this.getConversation(bot, input.conversationId)
    const tags = setEntries(input.tags)
    // An integration creating a user's message with tags (its outside id): a redelivery of that outside message
    // (the platform's webhook retried) returns the message already made, as getOrCreateMessage would: no second turn.
    if (integrationScope(bot) && input.userId !== bot.id && Object.keys(tags).length > 0) {
      return (await this.getOrAppend(bot, conversation, input.userId, message, tags, tags, {})).value
    }
    return this.appendMessage(bot, conversation, input.userId, message, tags, {})
  }

  private async appendMessage(
    bot: BotRow, conversation: RuntimeConversation, userId: string, { payload, metadata }: ChatShape, tags: Tags, options: { skipTurn?: boolean },
  ): Promise<BotChatMessage> {
    const integration = await this.integration(bot, conversation.integrationName)
    let message: MessageRow
    if (userId === bot.id) {
      message = (await this.appendOutgoing(integration, conversation.id, uuidv7(), payload, metadata, conversation.channel)).row
    } else {
      await this.options.operations?.beforeMessage(integration, conversation.id, conversation.channel, String(payload.type))
      const user = this.validId(userId) ? await this.store.getUser(integration.id, userId) : undefined
      if (!user) throw errors.notFound('User', userId)
      message = await this.chat.appendIncomingMessage(integration, user, conversation.id, payload, metadata ?? undefined, { asParticipant: false, ...options })
    }
    if (Object.keys(tags).length > 0) await this.store.botChat.tagMessage(integration.id, message.id, tags)
    return { ...message, tags, updatedAt: message.createdAt }
  }

  /**
   * The bot's own message (its user, id = the bot id): appended, then the conversation's streams are
   * told (a `message_created` with isBot true). No turn: the bot does not answer itself. With an `id`
   * already taken, the stored message is returned unchanged, `created` false (deterministic reply ids of a
   * turn run again): checked by the append itself (ConversationLog), not by a read before it.
   */
  async appendOutgoing(integration: IntegrationRow, conversationId: string, id: string, payload: JsonObject, metadata: JsonObject | null, channel?: string): Promise<Logged<MessageRow>> {
    await this.options.operations?.beforeMessage(integration, conversationId, channel, String(payload.type))
    const logged = await this.log.appendMessage({
      id, integrationId: integration.id, conversationId, userId: integration.botId, isBot: true,
      payload: normalizePayload(payload), metadata, notify: [conversationChanged(integration.id, conversationId)], ifAbsent: true, now: this.clock(),
    })
    if (!logged) throw errors.notFound('Conversation', conversationId)
    if (logged.created) this.options.onOutgoing?.(integration, logged.row)
    return logged
  }

  /**
   * The bot's own custom event in a conversation (its user, isBot): the conversation's listeners get an
   * `event_created` with isBot true; no turn. The sandboxed client's createEvent and the built-in chat's
   * `chat:sendEvent` action. An `id` already taken answers the stored event, `created` false (a turn run again).
   */
  appendBotEvent(integration: IntegrationRow, conversationId: string, id: string, payload: JsonObject): Promise<Logged<EventRow>> {
    return this.log.appendBotEvent(integration, conversationId, id, payload, this.clock())
  }

  /** Tags a message just appended (the sandboxed client's createMessage). */
  async tagMessage(integration: IntegrationRow, messageId: string, tags: Tags): Promise<void> {
    checkStringMap(tags, 'tags')
    await this.store.botChat.tagMessage(integration.id, messageId, tags)
  }

  async getOrCreateMessage(bot: BotRow, input: Omit<MessageInput, 'tags'> & { tags: TagPatch; discriminateByTags?: string[] | undefined }): Promise<Created<BotChatMessage>> {
    if (input.schedule !== undefined) throw errors.invalidPayload('schedule is not supported on Parley: create the message when it is due')
    const message = this.checkMessage(input)
    const conversation = await this.getConversation(bot, input.conversationId)
    const match = discriminator(input.tags, input.discriminateByTags)
    return this.getOrAppend(bot, conversation, input.userId, message, setEntries(input.tags), match, {})
  }

  private getOrAppend(
    bot: BotRow, conversation: RuntimeConversation, userId: string, message: ChatShape, tags: Tags, match: Tags, options: { skipTurn?: boolean },
  ): Promise<Created<BotChatMessage>> {
    return this.once('message', conversation.integrationId, [conversation.id, match], async () => {
      const existing = await this.store.botChat.findMessage(conversation.integrationId, conversation.id, match)
      if (existing) return { value: existing, created: false }
      return { value: await this.appendMessage(bot, conversation, userId, message, tags, options), created: true }
    })
  }

  async getMessage(bot: BotRow, id: string): Promise<BotChatMessage> {
    const message = this.validId(id) ? await this.store.botChat.getMessage((await this.integrations(bot)).map((i) => i.id), id) : undefined
    if (!message) throw errors.notFound('Message', id)
    return message
  }

  /**
   * Tags and payload (the stored payload is replaced, and the metadata too when the payload has a `metadata`;
   * streams are not told: the Chat API has no message update signal).
   */
  async updateMessage(bot: BotRow, id: string, patch: { tags?: TagPatch | undefined; payload?: JsonObject | undefined }): Promise<BotChatMessage> {
    checkStringMap(patch.tags, 'tags', true)
    const message = await this.getMessage(bot, id)
    const replaced = patch.payload === undefined ? undefined : this.checkMessage({ type: String(message.payload.type), payload: patch.payload })
    const metadata = replaced && Object.hasOwn(patch.payload!, 'metadata') ? { metadata: replaced.metadata } : {}
    const updated = await this.store.botChat.updateMessage(message.integrationId, id, { tags: patch.tags, payload: replaced?.payload, ...metadata }, this.clock())
    if (!updated) throw errors.notFound('Message', id)
    return updated
  }

  async deleteMessage(bot: BotRow, id: string): Promise<void> {
    const message = await this.getMessage(bot, id)
    if (await this.store.deleteMessage(message.integrationId, id, this.clock())) await this.notify(message.integrationId, message.conversationId)
  }

  async listMessages(bot: BotRow, q: ListMessagesQuery): Promise<Page<BotChatMessage>> {
    checkStringMap(q.tags, 'tags')
    const integrationIds = q.conversationId !== undefined
      ? [(await this.getConversation(bot, q.conversationId)).integrationId]
      : (await this.integrations(bot)).map((i) => i.id)
    return this.store.botChat.listMessages({
      integrationIds, conversationId: q.conversationId, tags: q.tags,
      afterDate: parseDate(q.afterDate, 'afterDate'), beforeDate: parseDate(q.beforeDate, 'beforeDate'),
    }, { after: q.nextToken, limit: pageSize(q.pageSize) })
  }

  /**
   * What an integration does when a message arrives from its platform, in one call: the user and the
   * conversation (by id, or got-or-created by tags), the user made a participant, then (optionally) the
   * message got-or-created by its tags as an incoming message, which gives the bot a turn.
   */
  async initializeIncomingMessage(bot: BotRow, input: {
    userId?: string | undefined
    user?: (UserInput & { discriminateByTags: string[] }) | undefined
    conversationId?: string | undefined
    conversation?: (ConversationInput & { discriminateByTags: string[] }) | undefined
    message?: { type: string; payload: JsonObject; tags: Tags; origin?: string | undefined; discriminateByTags: string[] } | undefined
  }): Promise<{ user: BotChatUser; conversation: RuntimeConversation; message?: BotChatMessage }> {
    if ((input.userId === undefined) === (input.user === undefined)) throw errors.invalidPayload('Give exactly one of userId and user')
    if ((input.conversationId === undefined) === (input.conversation === undefined)) throw errors.invalidPayload('Give exactly one of conversationId and conversation')
    const checked = input.message && this.checkMessage(input.message)
    const user = input.userId !== undefined ? await this.getUser(bot, input.userId) : (await this.getOrCreateUser(bot, input.user!)).value
    const conversation = input.conversationId !== undefined ? await this.getConversation(bot, input.conversationId) : (await this.getOrCreateConversation(bot, input.conversation!)).value
    if (user.integrationId !== conversation.integrationId) throw errors.invalidPayload('The user and the conversation belong to different integrations')
    if (!user.isBot && await this.store.addParticipant(conversation.integrationId, conversation.id, user.id, this.clock())) {
      await this.notify(conversation.integrationId, conversation.id)
    }
    if (!input.message || !checked) return { user, conversation: await this.getConversation(bot, conversation.id) }
    const match = discriminator(input.message.tags, input.message.discriminateByTags)
    const message = (await this.getOrAppend(bot, conversation, user.id, checked, setEntries(input.message.tags), match, {})).value
    return { user, conversation: await this.getConversation(bot, conversation.id), message }
  }

  /**
   * Imports past messages: each is got-or-created by its `discriminateByTags` (an import run twice adds
   * nothing), appended through the same path as any message but without a turn for the bot (history
   * is not replayed). The stored createdAt is the import's time (a conversation's signals stay in
   * order); the original `createdAt` is checked, not kept.
   */
  async importMessages(bot: BotRow, messages: (MessageInput & { createdAt: string; discriminateByTags: string[] })[]): Promise<BotChatMessage[]> {
    if (messages.length > MAX_IMPORT_MESSAGES) throw errors.invalidPayload(`importMessages: at most ${MAX_IMPORT_MESSAGES} messages per call`)
    const checked = messages.map((m) => ({ m, message: this.checkMessage(m), at: parseDate(m.createdAt, 'createdAt')! }))
    const out: BotChatMessage[] = []
    for (const { m, message } of checked.sort((a, b) => a.at - b.at)) {
      const conversation = await this.getConversation(bot, m.conversationId)
      const match = discriminator(m.tags, m.discriminateByTags)
      out.push((await this.getOrAppend(bot, conversation, m.userId, message, setEntries(m.tags), match, { skipTurn: true })).value)
    }
    return out
  }

  // ---- tags ----

  async listTagValues(bot: BotRow, key: string, kind: TagKind, q: { nextToken?: string | undefined; pageSize?: number | undefined }): Promise<Page<string>> {
    if (key.length === 0 || key.length > TAG_LIMITS.maxKeyLength || !storable(key)) return { items: [] }
    return this.store.botChat.listTagValues((await this.integrations(bot)).map((i) => i.id), kind, key, { after: q.nextToken, limit: pageSize(q.pageSize) })
  }

  /** Ids the store can look up (anything else is simply not found). */
  private validId(id: string): boolean {
    return id.length > 0 && id.length <= MAX_ID_LENGTH && storable(id)
  }
}

