import { publicWebchatConfig, sanitizeWebchatConfig, type WebchatConfig } from '../webchat/shared/webchat-config.js'
import { errors } from '../lib/errors.js'
import { hashSecret } from '../lib/crypto.js'
import { randomSecret, uuidv7 } from '../lib/ids.js'
import { looksLikeJwt, verifyHs256 } from '../lib/jwt.js'
import type { PubSub } from '../pubsub/pubsub.js'
import { conversationChanged, publishChange, type ConversationLog } from './conversation-log.js'
import {
  UniqueViolation,
  type AppendNotification, type ConversationRow, type EventRow, type IntegrationRow, type JsonObject, type MessageRow, type Page, type Store,
  type UserPatch, type UserRow,
} from '../store/store.js'

/** Caller-chosen ("foreign") ids of users and conversations. */
export const FOREIGN_ID = /^[A-Za-z0-9_-]{1,100}$/
/** The Chat API has no pageSize parameter; the server picks it. */
export const CHAT_PAGE_SIZE = 20
const MAX_KEY_LENGTH = 4096
/** Safety nets behind change notifications (another instance's change, a lost notification). */
const INTEGRATION_CACHE_TTL_MS = 5_000
const USER_KEY_CACHE_TTL_MS = 5_000
const CACHE_MAX_ENTRIES = 10_000

export interface ChatServiceOptions {
  clock?: () => number
}

/** A message or event about to be stored. */
export interface IncomingDraft { id: string; conversationId: string; userId: string; payload: JsonObject; custom: boolean; metadata?: JsonObject | undefined }

/** The bot's beforeIncoming hook: the payload to store (possibly changed), and whether the bot should skip it. */
export type IncomingHook = (draft: IncomingDraft) => Promise<{ payload: JsonObject; stop: boolean }>

/**
 * What the bot runtime needs to see of incoming messages and events: its beforeIncoming hook
 * runs before they are stored, and it is told about them once they are.
 */
export interface IncomingInterceptor {
  /** The integration's bot's beforeIncoming hook, or undefined when it has none. */
  incomingHook(integration: IntegrationRow): Promise<IncomingHook | undefined>
  /** The notification that a new incoming message or event gives the bot work, or undefined when its bot has no code. */
  turnNotification(integrationId: string, conversationId: string): Promise<AppendNotification | undefined>
}

/** Users updated or deleted (`[integrationId, userId]`): every instance drops its cached keys of that user. */
export const USERS_CHANNEL = 'users-changed'

/** A caller-chosen id (Chat API users and conversations, webchat API minted users): 400 otherwise. */
export function assertForeignId(id: string, what: string): void {
  if (!FOREIGN_ID.test(id)) {
    throw errors.invalidPayload(`${what} id must be 1 to 100 characters among letters, digits, "-" and "_"`)
  }
}

/**
 * The Chat API's rules, independent of HTTP: who may do what in which conversation.
 * Every operation is scoped by the integration resolved from the webhook id, so nothing
 * of one integration is visible through another.
 */
export class ChatService {
  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly log: ConversationLog,
    private readonly incoming?: IncomingInterceptor,
    options: ChatServiceOptions = {},
  ) {
    this.clock = options.clock ?? Date.now
  }

  private readonly clock: () => number
  /**
   * `integrationId:key` → the key's user (a pending lookup until it resolves); misses are not kept,
   * so only valid keys are held. Keyed by the key itself, not its digest: a hit skips the SHA-256.
   * Keys never change; users change only through updateUser and deleteUser (and with their bot),
   * which drop the user's entries here at once and on every other instance through USERS_CHANNEL
   * (BOTS_CHANNEL for bots); a short TTL covers a lost notification.
   */
  private readonly userKeys = new Map<string, { at: number; userId?: string; user: Promise<UserRow | undefined> }>()
  private readonly unsubscribes: (() => Promise<void>)[] = []

  /** Listens for user changes made by other instances (and by this one). */
  async start(): Promise<void> {
    this.unsubscribes.push(await this.pubsub.subscribe(USERS_CHANNEL, (message) => {
      const [integrationId, userId] = JSON.parse(message) as [string, string]
      this.forgetUser(integrationId, userId)
    }))
    // Notifications sent while the pub/sub was down are lost: start over.
    const stopListening = this.pubsub.onReconnect?.(() => this.forgetIntegrations())
    if (stopListening) this.unsubscribes.push(async () => stopListening())
  }

  async stop(): Promise<void> {
    await Promise.all(this.unsubscribes.splice(0).map((u) => u()))
  }

  /** Webhook id → integration, cached: every Chat API request needs it and it changes only with its bot. */
  private readonly integrations = new Map<string, { at: number; row: Promise<IntegrationRow | undefined> }>()

  /** Drops cached integrations (a bot changed somewhere: integration enabled, disabled, deleted). */
  forgetIntegrations(): void {
    this.integrations.clear()
    // A deleted bot takes its integrations' users with it.
    this.userKeys.clear()
  }

  /** Drops the cached keys of one user (updated or deleted); pending lookups are dropped too. */
  private forgetUser(integrationId: string, userId: string): void {
    for (const [k, entry] of this.userKeys) {
      if (entry.userId === undefined || (entry.userId === userId && k.startsWith(`${integrationId}:`))) this.userKeys.delete(k)
    }
  }

  private findUserByKey(integrationId: string, key: string): Promise<UserRow | undefined> {
    const k = `${integrationId}:${key}`
    const cached = this.userKeys.get(k)
    if (cached && this.clock() - cached.at <= USER_KEY_CACHE_TTL_MS) return cached.user
    if (this.userKeys.size >= CACHE_MAX_ENTRIES) this.userKeys.clear()
    const entry: { at: number; userId?: string; user: Promise<UserRow | undefined> } = {
      at: this.clock(), user: this.store.findUserByKeyHash(integrationId, hashSecret(key)),
    }
    this.userKeys.set(k, entry)
    entry.user.then(
      (user) => {
        if (user) entry.userId = user.id
        else if (this.userKeys.get(k) === entry) this.userKeys.delete(k)
      },
      () => this.userKeys.get(k) === entry && this.userKeys.delete(k),
    )
    return entry.user
  }

  /** This instance's cached keys of the user are dropped at once, other instances' when the notification arrives. */
  async userChanged(integrationId: string, userId: string): Promise<void> {
    this.forgetUser(integrationId, userId)
    // The change is committed: a lost notification must not turn it into an error (the TTL covers it).
    await this.pubsub.publish(USERS_CHANNEL, JSON.stringify([integrationId, userId])).catch(() => {})
  }

  async resolveIntegration(webhookId: string): Promise<IntegrationRow> {
    if (webhookId.length > 200) throw errors.notFound('Webhook', webhookId)
    let cached = this.integrations.get(webhookId)
    if (!cached || this.clock() - cached.at > INTEGRATION_CACHE_TTL_MS) {
      if (this.integrations.size >= 10_000) this.integrations.clear()
      cached = { at: this.clock(), row: this.store.getIntegrationByWebhookId(webhookId) }
      cached.row.catch(() => this.integrations.delete(webhookId))
      this.integrations.set(webhookId, cached)
    }
    const integration = await cached.row
    if (!integration || !integration.enabled || integration.name !== 'chat') throw errors.notFound('Webhook', webhookId)
    return integration
  }

  /** The webchat settings of the bot behind a chat integration (404 like resolveIntegration). */
  async webchatConfig(webhookId: string): Promise<WebchatConfig> {
    return this.botWebchatConfig(await this.resolveIntegration(webhookId))
  }

  private async botWebchatConfig(integration: IntegrationRow): Promise<WebchatConfig> {
    const bot = await this.store.getBot(integration.botId)
    return sanitizeWebchatConfig(bot?.webchat ?? {})
  }

  /**
   * What anyone may read of those settings (embed.js's launcher reads them cross-origin): the identity, look and
   * launcher, without the server's upload policy. Nothing in a bot's webchat settings is secret.
   */
  async publicWebchatConfig(integration: IntegrationRow): Promise<WebchatConfig> {
    return publicWebchatConfig(await this.botWebchatConfig(integration))
  }

  // ---- identity ----

  /** Who a user key designates: a stored user for server-issued keys, or the id inside a verified JWT. */
  private async identify(integration: IntegrationRow, key: string | undefined): Promise<{ user?: UserRow; jwtUserId?: string }> {
    if (!key) throw errors.unauthorized('The x-user-key header is required')
    if (key.length > MAX_KEY_LENGTH) throw errors.unauthorized('Invalid user key')
    if (looksLikeJwt(key)) {
      const verified = verifyHs256(key, integration.encryptionKey)
      if (!verified.ok) throw errors.unauthorized('Invalid user key')
      const id = verified.claims.id
      if (typeof id !== 'string') throw errors.unauthorized('Invalid user key: the token has no string "id" claim')
      assertForeignId(id, 'User')
      const user = await this.store.getUser(integration.id, id)
      return user ? { user } : { jwtUserId: id }
    }
    const user = await this.findUserByKey(integration.id, key)
    if (!user) throw errors.unauthorized('Invalid user key')
    return { user }
  }

  async authenticate(integration: IntegrationRow, key: string | undefined): Promise<UserRow> {
    const { user } = await this.identify(integration, key)
    if (!user) throw errors.unauthorized('This user does not exist yet; call POST /users/get-or-create first')
    return user
  }

  // ---- users ----

  async createUser(integration: IntegrationRow, input: { id?: string | undefined } & UserPatch): Promise<{ user: UserRow; key: string }> {
    const id = input.id ?? uuidv7()
    assertForeignId(id, 'User')
    const now = this.clock()
    let user: UserRow
    try {
      user = await this.store.createUser({ integrationId: integration.id, id, ...input, now })
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('User', id)
      throw err
    }
    const key = randomSecret('uk')
    await this.store.addUserKey(integration.id, user.id, hashSecret(key), now)
    return { user, key }
  }

  async getOrCreateUser(integration: IntegrationRow, key: string | undefined, input: UserPatch): Promise<UserRow> {
    const { user, jwtUserId } = await this.identify(integration, key)
    if (user) return user
    const result = await this.store.getOrCreateUser({ integrationId: integration.id, id: jwtUserId!, ...input, now: this.clock() })
    return result.user
  }

  async updateUser(user: UserRow, patch: UserPatch): Promise<UserRow> {
    const updated = await this.store.updateUser(user.integrationId, user.id, patch, this.clock())
    await this.userChanged(user.integrationId, user.id)
    if (!updated) throw errors.notFound('User', user.id)
    return updated
  }

  /** Leaves every conversation first (recording participant_removed, which ends the user's streams). */
  async deleteUser(user: UserRow): Promise<void> {
    for (;;) {
      const page = await this.store.listConversationsOf(user.integrationId, user.id, { limit: 100 })
      for (const conversation of page.items) {
        if (await this.store.removeParticipant(user.integrationId, conversation.id, user.id, this.clock())) {
          await this.notify(user.integrationId, conversation.id)
        }
      }
      if (!page.next) break
    }
    await this.store.deleteUser(user.integrationId, user.id)
    await this.userChanged(user.integrationId, user.id)
  }

  // ---- conversations ----

  async createConversation(user: UserRow, id: string | undefined): Promise<ConversationRow> {
    const conversationId = id ?? uuidv7()
    assertForeignId(conversationId, 'Conversation')
    let created: ConversationRow
    try {
      created = await this.store.createConversation(user.integrationId, conversationId, user.id, this.clock())
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Conversation', conversationId)
      throw err
    }
    await this.started(created)
    return created
  }

  /** A user created the conversation: the bot has work (its conversation start: the greeting, before the user types). */
  private async started(conversation: ConversationRow): Promise<void> {
    const turn = await this.incoming?.turnNotification(conversation.integrationId, conversation.id).catch(() => undefined)
    // Committed already: a lost poke only delays the start until the conversation's next message.
    if (turn) await this.pubsub.publish(turn.channel, turn.message).catch(() => {})
  }

  async getOrCreateConversation(user: UserRow, id: string): Promise<ConversationRow> {
    assertForeignId(id, 'Conversation')
    if (await this.store.getConversation(user.integrationId, id)) return this.getConversation(user, id)
    try {
      const created = await this.store.createConversation(user.integrationId, id, user.id, this.clock())
      await this.started(created)
      return created
    } catch (err) {
      // Lost a race with a concurrent creator: the conversation exists now.
      if (err instanceof UniqueViolation) return this.getConversation(user, id)
      throw err
    }
  }

  /** The conversation, if it exists (404) and the caller takes part in it (403). */
  async getConversation(user: UserRow, id: string): Promise<ConversationRow> {
    const access = await this.store.getConversationFor(user.integrationId, id, user.id)
    if (!access) throw errors.notFound('Conversation', id)
    if (!access.isParticipant) throw errors.forbidden('You are not a participant of this conversation')
    return access.conversation
  }

  async deleteConversation(user: UserRow, id: string): Promise<void> {
    await this.getConversation(user, id)
    await this.store.deleteConversation(user.integrationId, id)
    await this.notify(user.integrationId, id, 'deleted')
  }

  listConversations(user: UserRow, nextToken: string | undefined): Promise<Page<ConversationRow>> {
    return this.store.listConversationsOf(user.integrationId, user.id, { after: nextToken, limit: CHAT_PAGE_SIZE })
  }

  // ---- participants ----

  async addParticipant(user: UserRow, conversationId: string, userId: string): Promise<UserRow> {
    await this.getConversation(user, conversationId)
    const participant = await this.store.getUser(user.integrationId, userId)
    if (!participant) throw errors.notFound('User', userId)
    if (await this.store.addParticipant(user.integrationId, conversationId, userId, this.clock())) {
      await this.notify(user.integrationId, conversationId)
    }
    return participant
  }

  async getParticipant(user: UserRow, conversationId: string, userId: string): Promise<UserRow> {
    await this.getConversation(user, conversationId)
    const participant = await this.store.getParticipant(user.integrationId, conversationId, userId)
    if (!participant) throw errors.notFound('Participant', userId)
    return participant
  }

  async removeParticipant(user: UserRow, conversationId: string, userId: string): Promise<void> {
    const conversation = await this.getConversation(user, conversationId)
    if (conversation.ownerId === userId) throw errors.invalidPayload('The owner of a conversation cannot be removed from it')
    if (!(await this.store.removeParticipant(user.integrationId, conversationId, userId, this.clock()))) {
      throw errors.notFound('Participant', userId)
    }
    await this.notify(user.integrationId, conversationId)
  }

  async listParticipants(user: UserRow, conversationId: string, nextToken: string | undefined): Promise<Page<UserRow>> {
    await this.getConversation(user, conversationId)
    return this.store.listParticipants(user.integrationId, conversationId, { after: nextToken, limit: CHAT_PAGE_SIZE })
  }

  // ---- messages and events ----

  /**
   * Appends are conditional on the author taking part (checked in the append's own statement or
   * transaction), so a participant removed while the bot's beforeIncoming hook ran cannot post; when
   * nothing was appended, the access check says why (404 or 403).
   */
  private async refused(user: UserRow, conversationId: string): Promise<never> {
    await this.getConversation(user, conversationId)
    throw errors.notFound('Conversation', conversationId)
  }

  /**
   * The bot's beforeIncoming hook on a new message or event, if it has one. The hook must not run
   * for a caller who may not post, hence the access check before it; without a hook the append's
   * own participant check is enough (one query less per message).
   */
  private async beforeIncoming(integration: IntegrationRow, user: UserRow, draft: IncomingDraft): Promise<{ payload: JsonObject; stop: boolean } | undefined> {
    const hook = await this.incoming?.incomingHook(integration)
    if (!hook) return undefined
    await this.getConversation(user, draft.conversationId)
    return hook(draft)
  }

  createMessage(integration: IntegrationRow, user: UserRow, conversationId: string, payload: JsonObject, metadata: JsonObject | undefined): Promise<MessageRow> {
    return this.appendIncomingMessage(integration, user, conversationId, payload, metadata, { asParticipant: true })
  }

  /**
   * The one append path of a user's message (Chat API, and the Runtime API posting as a user): the
   * bot's beforeIncoming hook, the append, its notifications (the stream, and a turn for the bot).
   * `asParticipant`: the author must take part in the conversation (Chat API: 403 otherwise); the
   * Runtime API acts for an integration and posts as any user of the conversation's integration.
   * Without `asParticipant`, undefined when the conversation is gone.
   */
  async appendIncomingMessage(
    integration: IntegrationRow, user: UserRow, conversationId: string, payload: JsonObject, metadata: JsonObject | undefined,
    options: { asParticipant: boolean; skipTurn?: boolean },
  ): Promise<MessageRow> {
    const id = uuidv7()
    const hook = options.skipTurn ? undefined : await this.incoming?.incomingHook(integration)
    if (hook && options.asParticipant) await this.getConversation(user, conversationId)
    const hooked = hook && (await hook({ id, conversationId, userId: user.id, payload, custom: false, metadata }))
    const botSkip = options.skipTurn === true || (hooked?.stop ?? false)
    const notify = await this.appendNotifications(user.integrationId, conversationId, botSkip)
    const logged = await this.log.appendMessage({
      id, integrationId: user.integrationId, conversationId, userId: user.id, isBot: user.isBot,
      payload: hooked?.payload ?? payload, metadata: metadata ?? null, botSkip, requireParticipant: options.asParticipant, notify, now: this.clock(),
    })
    if (!logged) return options.asParticipant ? this.refused(user, conversationId) : Promise.reject(errors.notFound('Conversation', conversationId))
    return logged.row
  }

  /** A message of a conversation the caller takes part in (404 if unknown, 403 if not a participant). */
  private async visibleMessage(user: UserRow, id: string): Promise<MessageRow> {
    const message = await this.store.getMessage(user.integrationId, id)
    if (!message) throw errors.notFound('Message', id)
    await this.getConversation(user, message.conversationId)
    return message
  }

  getMessage(user: UserRow, id: string): Promise<MessageRow> {
    return this.visibleMessage(user, id)
  }

  /**
   * Feedback (thumbs up or down) of a participant on one of the bot's messages, recorded on the message: its
   * metadata's `feedback` ({ value, userId, comment?, at }, what the Chat API returns) and its `feedback` tag
   * (`positive`/`negative`, what the Runtime API returns and filters on). `null` removes it. One feedback per
   * message: the last one given wins.
   */
  async setMessageFeedback(user: UserRow, id: string, input: { value: 'positive' | 'negative' | null; comment?: string | undefined }): Promise<MessageRow> {
    const message = await this.visibleMessage(user, id)
    if (!message.isBot) throw errors.invalidPayload('Feedback is for the bot\'s messages; this message was written by a user')
    const { feedback: _old, ...metadata } = message.metadata ?? {}
    const feedback = input.value === null ? undefined : {
      value: input.value, userId: user.id, at: new Date(this.clock()).toISOString(), ...(input.comment !== undefined && { comment: input.comment }),
    }
    const next = feedback ? { ...metadata, feedback } : metadata
    const updated = await this.store.botChat.updateMessage(user.integrationId, id, {
      metadata: Object.keys(next).length > 0 ? next : null,
      tags: { feedback: input.value },
    }, this.clock())
    if (!updated) throw errors.notFound('Message', id)
    return updated
  }

  async deleteMessage(user: UserRow, id: string): Promise<void> {
    const message = await this.visibleMessage(user, id)
    if (message.userId !== user.id) throw errors.forbidden('Only the author of a message may delete it')
    if (await this.store.deleteMessage(user.integrationId, id, this.clock())) {
      await this.notify(user.integrationId, message.conversationId)
    }
  }

  async listMessages(user: UserRow, conversationId: string, nextToken: string | undefined): Promise<Page<MessageRow>> {
    await this.getConversation(user, conversationId)
    return this.store.listMessages(user.integrationId, conversationId, { after: nextToken, limit: CHAT_PAGE_SIZE })
  }

  async createEvent(integration: IntegrationRow, user: UserRow, conversationId: string, payload: JsonObject): Promise<EventRow> {
    const id = uuidv7()
    const hooked = await this.beforeIncoming(integration, user, { id, conversationId, userId: user.id, payload, custom: true })
    const notify = await this.appendNotifications(user.integrationId, conversationId, hooked?.stop ?? false)
    const logged = await this.log.appendEvent({
      id, integrationId: user.integrationId, conversationId, userId: user.id, isBot: user.isBot, payload: hooked?.payload ?? payload,
      botSkip: hooked?.stop ?? false, requireParticipant: true, notify, now: this.clock(),
    })
    if (!logged) return this.refused(user, conversationId)
    return logged.row
  }

  /**
   * An incoming custom event appended to a conversation's log for the bot's Runtime API (createEvent
   * with a conversationId, a scheduled event falling due): the path of createEvent (the bot's
   * beforeIncoming hook, the turn notification, the stream's), with the caller's id (a redelivery
   * finds the event already there: the append is `ifAbsent`) and without the participant check (the
   * bot acts on its own conversation). Undefined when the conversation does not exist (any more).
   */
  async appendIncomingEvent(integration: IntegrationRow, e: { id: string; conversationId: string; userId: string; payload: JsonObject }): Promise<EventRow | undefined> {
    const hook = await this.incoming?.incomingHook(integration)
    if (hook) {
      // The bot's hook runs once per event, and only for a conversation that exists (it may change the payload).
      const existing = await this.store.getEvent(integration.id, e.id)
      if (existing) return existing
      if (!(await this.store.getConversation(integration.id, e.conversationId))) return undefined
    }
    const hooked = hook ? await hook({ ...e, custom: true }) : undefined
    const notify = await this.appendNotifications(integration.id, e.conversationId, hooked?.stop ?? false)
    const logged = await this.log.appendEvent({
      id: e.id, integrationId: integration.id, conversationId: e.conversationId, userId: e.userId, isBot: false, payload: hooked?.payload ?? e.payload,
      botSkip: hooked?.stop ?? false, notify, ifAbsent: true, now: this.clock(),
    })
    return logged?.row
  }

  async getEvent(user: UserRow, id: string): Promise<EventRow> {
    const event = await this.store.getEvent(user.integrationId, id)
    if (!event) throw errors.notFound('Event', id)
    await this.getConversation(user, event.conversationId)
    return event
  }

  /** An incoming append's notifications: its conversation changed and, unless a hook stopped it, the bot has work. */
  private async appendNotifications(integrationId: string, conversationId: string, botSkip: boolean): Promise<AppendNotification[]> {
    const turn = botSkip ? undefined : await this.incoming?.turnNotification(integrationId, conversationId)
    return turn ? [conversationChanged(integrationId, conversationId), turn] : [conversationChanged(integrationId, conversationId)]
  }

  /** Wakes the conversation's streams; they read what is new from the store. */
  private async notify(integrationId: string, conversationId: string, message?: 'deleted'): Promise<void> {
    // The write is committed: a lost poke must not turn it into an error. Streams re-read the store
    // on their next poke, or when the pub/sub reconnects.
    await publishChange(this.pubsub, integrationId, conversationId, message)
  }
}
