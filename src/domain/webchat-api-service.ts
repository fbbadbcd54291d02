import { timingSafeEqual } from 'node:crypto'
import { ApiError, errors } from '../lib/errors.js'
import { signHs256 } from '../lib/jwt.js'
import { uuidv7 } from '../lib/ids.js'
import type { ConversationRow, EventRow, IntegrationRow, JsonObject, MessageRow, Store, UserRow } from '../store/store.js'
import { assertForeignId, type ChatService } from './chat-service.js'
import { inferContentType } from './file-service.js'
import type { WebchatUploadService } from './webchat-upload-service.js'
import { unwrapBlocItem, webchatUserView, type WebchatUser } from './webchat-api-views.js'

/** What `PUT /users/me` and `POST /users` take: `userData` and `attributes` may come as JSON text (the client's types allow it). */
export interface WebchatUserInput {
  name?: string | undefined
  pictureUrl?: string | undefined
  userData?: unknown
  attributes?: unknown
}

export interface Initialized {
  user: UserRow
  /** The key the client authenticates with from now on: the one it came with, or a new user's. */
  userKey: string
  conversation: ConversationRow
  messages: MessageRow[]
  participants: UserRow[]
}

const MAX_USER_DATA = 1000
const MAX_ATTRIBUTES = 50
/** Media payloads the webchat sends after an upload: their `fileId` is kept in the metadata (Parley's payloads are strict). */
const MEDIA_URL: Record<string, string> = { image: 'imageUrl', audio: 'audioUrl', video: 'videoUrl', file: 'fileUrl' }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function parseMaybeJson(value: unknown, what: string): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch {
    throw errors.invalidPayload(`${what} must be an object, or an object as JSON text`)
  }
}

/**
 * Botpress's webchat API (`{apiUrl}/{clientId}`, llm-wire.md §4) over the Chat API's domain: the same users,
 * conversations and messages (ChatService), so a conversation opened in the official webchat is the Chat and Runtime
 * APIs', the console's and handoff's like any other. The `clientId` is the chat integration's webhook id, and the
 * admin secret is that integration's encryption key (the one that signs a Chat API user's JWT key): a backend
 * holding it mints keys for its own user ids (`POST /users/key`), which are such JWTs. What is added here:
 * `/initialize` (a user and a conversation when the client has none), the webchat's user fields (`userData` in the
 * profile, `attributes`), the answer to a button, uploads named by key, and the `conversation_started` event.
 */
export class WebchatApiService {
  constructor(
    private readonly store: Store,
    private readonly chat: ChatService,
    private readonly uploads: WebchatUploadService,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Refuses a missing or wrong admin secret (401): compared in constant time with the integration's encryption key. */
  checkAdminSecret(integration: IntegrationRow, secret: string | undefined): void {
    if (secret === undefined) throw errors.unauthorized('This operation needs the x-admin-secret header (the chat integration\'s encryption key)')
    const given = Buffer.from(secret)
    const expected = Buffer.from(integration.encryptionKey)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw errors.unauthorized('Invalid admin secret')
  }

  /** A key for user `id` of this integration (created on its first use): an HS256 JWT, as a Chat API manual key. */
  mintUserKey(integration: IntegrationRow, secret: string | undefined, id: string, expiresAt: number | undefined): string {
    this.checkAdminSecret(integration, secret)
    // Botpress's type says "number": milliseconds since the epoch; a value that can only be seconds is read as seconds.
    const exp = expiresAt === undefined ? undefined : Math.floor(expiresAt > 1e11 ? expiresAt / 1000 : expiresAt)
    if (exp !== undefined && exp * 1000 <= this.clock()) throw errors.invalidPayload('expiresAt is in the past')
    assertForeignId(id, 'User')
    return signHs256({ id, ...(exp !== undefined && { exp }) }, integration.encryptionKey)
  }

  /**
   * GET /initialize: the client's user (its key, a minted one for `userId` with the admin secret, or a new user), and
   * its conversation (`conversationId`, or a new one: its start turn greets), with the newest messages first.
   */
  async initialize(integration: IntegrationRow, input: { key?: string | undefined; adminSecret?: string | undefined; userId?: string | undefined; conversationId?: string | undefined }): Promise<Initialized> {
    let key = input.key
    if (key === undefined && input.userId !== undefined) key = this.mintUserKey(integration, input.adminSecret, input.userId, undefined)
    let user: UserRow
    if (key === undefined) {
      const created = await this.chat.createUser(integration, {})
      user = created.user
      key = created.key
    } else {
      user = await this.chat.getOrCreateUser(integration, key, {})
    }
    const conversation = input.conversationId === undefined
      ? await this.chat.createConversation(user, undefined)
      : await this.chat.getConversation(user, input.conversationId)
    const [messages, participants] = await Promise.all([
      this.chat.listMessages(user, conversation.id, undefined),
      this.chat.listParticipants(user, conversation.id, undefined),
    ])
    return { user, userKey: key, conversation, messages: messages.items, participants: participants.items }
  }

  async createUser(integration: IntegrationRow, input: WebchatUserInput): Promise<{ user: WebchatUser; key: string }> {
    const { patch, attributes } = this.userPatch(input)
    const { user, key } = await this.chat.createUser(integration, patch)
    if (attributes) await this.store.botChat.updateUser(integration.id, user.id, { attributes }, this.clock())
    return { user: await this.userView(user), key }
  }

  async userView(user: UserRow): Promise<WebchatUser> {
    const [withTags] = await this.store.botChat.getUsers(user.integrationId, [user.id])
    return webchatUserView(withTags ?? user, nonNull(withTags?.attributes))
  }

  async updateUser(user: UserRow, input: WebchatUserInput): Promise<WebchatUser> {
    const { patch, attributes } = this.userPatch(input)
    let updated = await this.chat.updateUser(user, patch)
    if (attributes) {
      const row = await this.store.botChat.updateUser(user.integrationId, user.id, { attributes }, this.clock())
      if (row) updated = row
    }
    return this.userView(updated)
  }

  private userPatch(input: WebchatUserInput): { patch: { name?: string; pictureUrl?: string; profile?: string }; attributes?: Record<string, string | null> } {
    const patch: { name?: string; pictureUrl?: string; profile?: string } = {}
    if (input.name !== undefined) patch.name = input.name
    if (input.pictureUrl !== undefined) patch.pictureUrl = input.pictureUrl
    if (input.userData !== undefined) {
      const data = input.userData
      // null clears it (an empty profile reads as no data)
      if (data === null) patch.profile = ''
      else {
        if (!isObject(data) && typeof data !== 'string') throw errors.invalidPayload('userData must be an object or a string')
        const text = typeof data === 'string' ? data : JSON.stringify(data)
        if (text.length > MAX_USER_DATA) throw errors.invalidPayload(`userData is ${text.length} characters as JSON; at most ${MAX_USER_DATA}`)
        patch.profile = text
      }
    }
    if (input.attributes === undefined) return { patch }
    const raw = parseMaybeJson(input.attributes, 'attributes')
    if (!isObject(raw)) throw errors.invalidPayload('attributes must be an object of strings')
    const entries = Object.entries(raw)
    if (entries.length > MAX_ATTRIBUTES) throw errors.invalidPayload(`attributes has ${entries.length} keys; at most ${MAX_ATTRIBUTES}`)
    const attributes: Record<string, string | null> = {}
    for (const [k, v] of entries) {
      if (k.length === 0 || k.length > 100) throw errors.invalidPayload('An attribute name must be 1-100 characters')
      if (v !== null && (typeof v !== 'string' || v.length > 1000)) throw errors.invalidPayload(`attributes.${k.slice(0, 100)} must be a string of at most 1000 characters, or null`)
      attributes[k] = v
    }
    return { patch, attributes }
  }

  /**
   * A message from the webchat, as Parley stores it: a button's answer (`{type:'text', text: label, value}`) is its
   * value with the label in `metadata.webchat.label` (what Parley's own webchat sends), and an uploaded file's
   * `fileId` moves to `metadata.webchat.fileId`.
   */
  incoming(payload: JsonObject, metadata: JsonObject | undefined): { payload: JsonObject; metadata: JsonObject | undefined } {
    const webchat: JsonObject = isObject(metadata?.webchat) ? { ...(metadata.webchat as JsonObject) } : {}
    let out = payload
    if (payload.type === 'text' && typeof payload.value === 'string' && payload.value !== '') {
      if (typeof payload.text === 'string') webchat.label = payload.text
      out = { type: 'text', text: payload.value }
    } else if (typeof payload.type === 'string' && MEDIA_URL[payload.type] && 'fileId' in payload) {
      const { fileId, ...rest } = payload
      if (typeof fileId === 'string') webchat.fileId = fileId
      out = rest
    } else if (payload.type === 'bloc' && Array.isArray(payload.items)) {
      // A file sent with text: `{type:'bloc', items:[{type, payload:{…, fileId}}]}`; Parley's items are flat.
      const fileIds: string[] = []
      const items = payload.items.map((raw) => {
        const item = unwrapBlocItem(raw)
        if (!isObject(item) || !('fileId' in item)) return item
        const { fileId, ...rest } = item
        if (typeof fileId === 'string') fileIds.push(fileId)
        return rest
      })
      if (fileIds.length > 0) webchat.fileIds = fileIds
      out = { ...payload, items } as JsonObject
    }
    if (Object.keys(webchat).length === 0) return { payload: out, metadata }
    return { payload: out, metadata: { ...(metadata ?? {}), webchat } }
  }

  /**
   * POST /events. `conversation_started` (sent each time the webchat opens a conversation) is not stored: the
   * conversation's start is Parley's own turn, run when it was created. It answers whether this is the
   * conversation's first opening (`status.isInitial`: no user has written in it yet), which the webchat tells the page.
   */
  async createEvent(integration: IntegrationRow, user: UserRow, conversationId: string, payload: JsonObject): Promise<EventRow> {
    if (payload.type === 'conversation_started') {
      await this.chat.getConversation(user, conversationId)
      const recent = await this.chat.listMessages(user, conversationId, undefined)
      const isInitial = !recent.items.some((m) => !m.isBot) && recent.next === undefined
      const now = this.clock()
      return {
        id: uuidv7(), integrationId: user.integrationId, conversationId, seq: 0, userId: user.id, isBot: false, botSkip: true, createdAt: now,
        payload: { type: 'conversation_started', data: { ...(isObject(payload.data) ? payload.data : {}), status: { isInitial } } },
      }
    }
    return this.chat.createEvent(integration, user, conversationId, payload)
  }

  /**
   * PUT /messages/{id}: the author of a message may replace its metadata. Its payload stays: the bot has answered
   * what was sent (400 with a payload).
   */
  async updateMessage(user: UserRow, id: string, input: { payload?: unknown; metadata?: JsonObject | undefined }): Promise<MessageRow> {
    const message = await this.chat.getMessage(user, id)
    if (message.userId !== user.id) throw errors.forbidden('Only the author of a message may update it')
    if (input.payload !== undefined) throw errors.invalidPayload('A sent message\'s payload cannot be changed (the bot has answered it); only its metadata')
    if (input.metadata === undefined) return message
    const { feedback } = message.metadata ?? {}
    const metadata = { ...input.metadata, ...(feedback !== undefined && { feedback }) }
    const updated = await this.store.botChat.updateMessage(user.integrationId, id, { metadata: Object.keys(metadata).length > 0 ? metadata : null }, this.clock())
    if (!updated) throw errors.notFound('Message', id)
    return updated
  }

  /** POST /files: the webchat names its upload by `key`; its type comes from `contentType` or the key's extension. */
  async createFile(user: UserRow, input: { key: string; size: number; contentType?: string | undefined }) {
    const contentType = input.contentType ?? inferContentType(input.key)
    const name = input.key.split('/').pop() ?? input.key
    try {
      const upload = await this.uploads.createUpload(user, { name, contentType, size: input.size })
      return { upload, contentType, name }
    } catch (err) {
      // The webchat reads a 403 Forbidden as "not a participant" and drops the conversation for a new one: a chat
      // that takes no files says so as a refused type, which the webchat shows.
      if (err instanceof ApiError && err.type === 'Forbidden') throw new ApiError('UnsupportedMediaType', err.message)
      throw err
    }
  }
}

function nonNull(tags: Record<string, string> | null | undefined): Record<string, string> | undefined {
  return tags ?? undefined
}
