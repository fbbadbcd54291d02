import { createHmac } from 'node:crypto'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import type { ConversationView, EventView, MessageView, UserView } from '../../src/domain/chat-views.js'
import type { App } from '../../src/http/types.js'
import { ERROR_STATUS, type ErrorType } from '../../src/lib/errors.js'
import { signHs256 } from '../../src/lib/jwt.js'
import { startParley, type Harness } from './harness.js'

/**
 * A tiny typed wrapper over `app.inject` for the Chat API: every call returns the status, the
 * headers and the parsed JSON body, and the `create*` helpers fail loudly on anything but 2xx so
 * that fixtures never silently go wrong.
 */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS' | 'HEAD'

export interface ChatResponse<T = unknown> {
  status: number
  headers: LightMyRequestResponse['headers']
  text: string
  body: T
}

export interface RequestOptions {
  key?: string | undefined
  body?: unknown
  headers?: Record<string, string>
  query?: Record<string, string>
  /** Send this exact text as the body (with content-type application/json unless headers say otherwise). */
  raw?: string | Buffer
}

export interface ApiErrorBody {
  id: string
  code: number
  type: string
  message: string
  metadata?: Record<string, unknown>
}

let counter = 0
/** A fresh, valid foreign id (letters, digits, "-"). */
export function fid(prefix = 'id'): string {
  counter++
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`
}

function parse(text: string): unknown {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export class ChatClient {
  constructor(
    readonly app: App,
    readonly webhookId: string,
    readonly encryptionKey: string,
  ) {}

  /** A client for the harness's chat integration. */
  static of(h: Harness): ChatClient {
    return new ChatClient(h.app, h.credentials.chat.webhookId, h.credentials.chat.encryptionKey)
  }

  /** A client for the same app under another webhook id (e.g. an unknown one). */
  withWebhook(webhookId: string, encryptionKey = this.encryptionKey): ChatClient {
    return new ChatClient(this.app, webhookId, encryptionKey)
  }

  url(path: string, query?: Record<string, string>): string {
    const qs = query ? `?${new URLSearchParams(query).toString()}` : ''
    return `/${this.webhookId}${path}${qs}`
  }

  async request<T = unknown>(method: Method, path: string, options: RequestOptions = {}): Promise<ChatResponse<T>> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.key !== undefined) headers['x-user-key'] = options.key
    const inject: InjectOptions = { method, url: this.url(path, options.query), headers }
    if (options.raw !== undefined) {
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json'
      inject.payload = options.raw
    } else if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json'
      inject.payload = JSON.stringify(options.body)
    }
    const res = await this.app.inject(inject)
    return { status: res.statusCode, headers: res.headers, text: res.body, body: parse(res.body) as T }
  }

  /** Mints a key exactly as @botpress/chat does for manual authentication: HS256 `{ id, iat }`. */
  jwt(userId: string, extra: Record<string, unknown> = {}): string {
    return signHs256({ id: userId, iat: Math.floor(Date.now() / 1000), ...extra }, this.encryptionKey)
  }

  // ---- fixtures (throw unless 2xx) ----

  private ok<T>(res: ChatResponse<T>, what: string): T {
    if (res.status < 200 || res.status >= 300) throw new Error(`${what} failed: ${res.status} ${res.text}`)
    return res.body
  }

  async createUser(body: Record<string, unknown> = {}): Promise<{ user: UserView; key: string }> {
    return this.ok(await this.request<{ user: UserView; key: string }>('POST', '/users', { body }), 'createUser')
  }

  async createConversation(key: string, id?: string): Promise<ConversationView> {
    const res = await this.request<{ conversation: ConversationView }>('POST', '/conversations', { key, body: id === undefined ? {} : { id } })
    return this.ok(res, 'createConversation').conversation
  }

  async addParticipant(key: string, conversationId: string, userId: string): Promise<UserView> {
    const res = await this.request<{ participant: UserView }>('POST', `/conversations/${conversationId}/participants`, { key, body: { userId } })
    return this.ok(res, 'addParticipant').participant
  }

  /** An owner, a conversation (id prefixed `prefix`) and a second participant. */
  async conversationWithMember(prefix: string) {
    const owner = await this.createUser()
    const member = await this.createUser()
    const conversation = await this.createConversation(owner.key, fid(prefix))
    await this.addParticipant(owner.key, conversation.id, member.user.id)
    return { owner, member, conversationId: conversation.id }
  }

  async createMessage(key: string, conversationId: string, payload: Record<string, unknown>, metadata?: Record<string, unknown>): Promise<MessageView> {
    const body = { conversationId, payload, ...(metadata && { metadata }) }
    return this.ok(await this.request<{ message: MessageView }>('POST', '/messages', { key, body }), 'createMessage').message
  }

  async text(key: string, conversationId: string, text: string): Promise<MessageView> {
    return this.createMessage(key, conversationId, { type: 'text', text })
  }

  async createEvent(key: string, conversationId: string, payload: Record<string, unknown>): Promise<EventView> {
    return this.ok(await this.request<{ event: EventView }>('POST', '/events', { key, body: { conversationId, payload } }), 'createEvent').event
  }

  /** Follows meta.nextToken to the end; returns every item and the number of pages. */
  async listAll<T>(key: string, path: string, field: 'conversations' | 'messages' | 'participants'): Promise<{ items: T[]; pages: number; tokens: string[] }> {
    const items: T[] = []
    const tokens: string[] = []
    let nextToken: string | undefined
    let pages = 0
    do {
      const res = await this.request<Record<string, unknown> & { meta: { nextToken?: string } }>('GET', path, {
        key,
        ...(nextToken !== undefined && { query: { nextToken } }),
      })
      if (res.status !== 200) throw new Error(`list ${path} failed: ${res.status} ${res.text}`)
      pages++
      items.push(...(res.body[field] as T[]))
      nextToken = res.body.meta.nextToken
      if (nextToken !== undefined) tokens.push(nextToken)
      if (pages > 1000) throw new Error('pagination does not end')
    } while (nextToken)
    return { items, pages, tokens }
  }
}

// ---- assertions ----

const ERROR_KEYS = new Set(['id', 'code', 'type', 'message', 'metadata'])

/** Every non-2xx: JSON `{id, code, type, message}` with code == status and a registered type. */
export function expectApiError(res: ChatResponse, status: number, type?: ErrorType): ApiErrorBody {
  expect(res.status, `status (body: ${res.text.slice(0, 300)})`).toBe(status)
  expect(String(res.headers['content-type'] ?? '')).toMatch(/^application\/json/)
  const body = res.body as ApiErrorBody
  expect(typeof body, res.text).toBe('object')
  expect(body).not.toBeNull()
  for (const key of Object.keys(body)) expect(ERROR_KEYS.has(key), `unexpected key ${key} in error body`).toBe(true)
  expect(typeof body.id).toBe('string')
  expect(body.id.length).toBeGreaterThan(0)
  expect(body.code).toBe(status)
  expect(typeof body.type).toBe('string')
  expect(typeof body.message).toBe('string')
  expect(Object.keys(ERROR_STATUS)).toContain(body.type)
  expect(ERROR_STATUS[body.type as ErrorType]).toBe(status)
  if (type !== undefined) expect(body.type).toBe(type)
  return body
}

/**
 * A refused request must not echo anything of another tenant that the caller did not send itself:
 * each secret that does not occur in the request is absent from the response.
 */
export function expectNoLeak(res: ChatResponse, secrets: string[], requestText: string): void {
  for (const secret of secrets) {
    if (secret.length === 0 || requestText.includes(secret)) continue
    expect(res.text.includes(secret), `response leaks "${secret}": ${res.text.slice(0, 300)}`).toBe(false)
  }
}

// ---- forged keys ----

/** base64url of a JSON value (a string as it is): hand-made cursors and headers. */
export const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

export interface ForgedKeys {
  none: string
  hs512: string
  wrongSecret: string
  rs256Header: string
  tampered: string
  expired: string
  huge: string
  hugeJwt: string
  garbage: string
  jwtLookingGarbage: string
  numericId: string
  missingId: string
  invalidId: string
  nonExistentUser: string
}

/**
 * Keys that must never authenticate `userId` on the integration whose secret is `secret`
 * (`invalidId` and `nonExistentUser` are correctly signed, for the 400 / 401-unknown cases).
 */
export function forgeKeys(userId: string, secret: string): ForgedKeys {
  const iat = Math.floor(Date.now() / 1000)
  const claims = { id: userId, iat }
  const valid = signHs256(claims, secret)
  const [h, , s] = valid.split('.') as [string, string, string]
  const hs512Header = b64({ alg: 'HS512', typ: 'JWT' })
  const hs512Payload = b64(claims)
  const hs512Sig = createHmac('sha512', secret).update(`${hs512Header}.${hs512Payload}`).digest('base64url')
  return {
    none: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
    hs512: `${hs512Header}.${hs512Payload}.${hs512Sig}`,
    wrongSecret: signHs256(claims, `${secret}-not`),
    // RS/HS confusion: an RS256 header, "signed" with the shared secret as an HMAC key.
    rs256Header: signHs256(claims, secret, { alg: 'RS256', typ: 'JWT' }),
    // Someone else's id in the payload, the original header and signature kept.
    tampered: `${h}.${b64({ id: `${userId}x`, iat })}.${s}`,
    expired: signHs256({ ...claims, exp: iat - 60 }, secret),
    huge: 'k'.repeat(5000),
    hugeJwt: signHs256({ ...claims, pad: 'p'.repeat(5000) }, secret),
    garbage: 'uk_definitely-not-a-key',
    jwtLookingGarbage: 'eyJhbGciOiJIUzI1NiJ9.e30.AAAA',
    numericId: signHs256({ id: 12345, iat }, secret),
    missingId: signHs256({ sub: userId, iat }, secret),
    invalidId: signHs256({ id: 'a+b', iat }, secret),
    nonExistentUser: signHs256({ id: fid('ghost'), iat }, secret),
  }
}

// ---- the authenticated Chat routes, for table-driven tests ----

export interface Fixture {
  ownerKey: string
  ownerId: string
  memberId: string
  memberKey: string
  conversationId: string
  messageId: string
  messageText: string
  eventId: string
}

export type RouteGroup = 'users' | 'conversations' | 'participants' | 'messages' | 'events' | 'stream'

export interface RouteCase {
  op: string
  group: RouteGroup
  method: Method
  path: (f: Fixture) => string
  body?: (f: Fixture) => unknown
  /** The route acts on one conversation (or an item of one): non-participants get 403. */
  conversationScoped: boolean
  /** Status of a successful call by the conversation owner. */
  okStatus: number
}

export const AUTHENTICATED_ROUTES: RouteCase[] = [
  { op: 'getOrCreateUser', group: 'users', method: 'POST', path: () => '/users/get-or-create', body: () => ({}), conversationScoped: false, okStatus: 201 },
  { op: 'getUser', group: 'users', method: 'GET', path: () => '/users/me', conversationScoped: false, okStatus: 200 },
  { op: 'updateUser', group: 'users', method: 'PUT', path: () => '/users/me', body: () => ({ name: 'Renamed' }), conversationScoped: false, okStatus: 200 },
  { op: 'deleteUser', group: 'users', method: 'DELETE', path: () => '/users/me', body: () => ({}), conversationScoped: false, okStatus: 200 },
  { op: 'createConversation', group: 'conversations', method: 'POST', path: () => '/conversations', body: () => ({}), conversationScoped: false, okStatus: 201 },
  { op: 'getOrCreateConversation', group: 'conversations', method: 'POST', path: () => '/conversations/get-or-create', body: () => ({ id: fid('goc') }), conversationScoped: false, okStatus: 201 },
  { op: 'getConversation', group: 'conversations', method: 'GET', path: (f) => `/conversations/${f.conversationId}`, conversationScoped: true, okStatus: 200 },
  { op: 'deleteConversation', group: 'conversations', method: 'DELETE', path: (f) => `/conversations/${f.conversationId}`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'listConversations', group: 'conversations', method: 'GET', path: () => '/conversations', conversationScoped: false, okStatus: 200 },
  { op: 'listenConversation', group: 'stream', method: 'GET', path: (f) => `/conversations/${f.conversationId}/listen`, conversationScoped: true, okStatus: 200 },
  { op: 'addParticipant', group: 'participants', method: 'POST', path: (f) => `/conversations/${f.conversationId}/participants`, body: (f) => ({ userId: f.memberId }), conversationScoped: true, okStatus: 200 },
  { op: 'getParticipant', group: 'participants', method: 'GET', path: (f) => `/conversations/${f.conversationId}/participants/${f.memberId}`, conversationScoped: true, okStatus: 200 },
  { op: 'removeParticipant', group: 'participants', method: 'DELETE', path: (f) => `/conversations/${f.conversationId}/participants/${f.memberId}`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'listParticipants', group: 'participants', method: 'GET', path: (f) => `/conversations/${f.conversationId}/participants`, conversationScoped: true, okStatus: 200 },
  { op: 'createMessage', group: 'messages', method: 'POST', path: () => '/messages', body: (f) => ({ conversationId: f.conversationId, payload: { type: 'text', text: 'hi' } }), conversationScoped: true, okStatus: 201 },
  { op: 'getMessage', group: 'messages', method: 'GET', path: (f) => `/messages/${f.messageId}`, conversationScoped: true, okStatus: 200 },
  { op: 'deleteMessage', group: 'messages', method: 'DELETE', path: (f) => `/messages/${f.messageId}`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'listMessages', group: 'messages', method: 'GET', path: (f) => `/conversations/${f.conversationId}/messages`, conversationScoped: true, okStatus: 200 },
  { op: 'createEvent', group: 'events', method: 'POST', path: () => '/events', body: (f) => ({ conversationId: f.conversationId, payload: { kind: 'typing' } }), conversationScoped: true, okStatus: 201 },
  { op: 'getEvent', group: 'events', method: 'GET', path: (f) => `/events/${f.eventId}`, conversationScoped: true, okStatus: 200 },
]

/** An owner with a conversation holding one member, one message and one event. */
export async function createFixture(chat: ChatClient, tag = 'fx'): Promise<Fixture> {
  const owner = await chat.createUser({ id: fid(`${tag}-owner`), name: `${tag} owner name` })
  const member = await chat.createUser({ id: fid(`${tag}-member`), name: `${tag} member name` })
  const conversation = await chat.createConversation(owner.key, fid(`${tag}-conv`))
  await chat.addParticipant(owner.key, conversation.id, member.user.id)
  const messageText = `${tag} secret text ${fid('t')}`
  const message = await chat.text(owner.key, conversation.id, messageText)
  const event = await chat.createEvent(owner.key, conversation.id, { secret: `${tag}-event-secret` })
  return {
    ownerKey: owner.key,
    ownerId: owner.user.id,
    memberId: member.user.id,
    memberKey: member.key,
    conversationId: conversation.id,
    messageId: message.id,
    messageText,
    eventId: event.id,
  }
}

/** Everything of a fixture that another tenant must never see. */
export const fixtureSecrets = (f: Fixture): string[] => [
  f.ownerKey, f.ownerId, f.memberId, f.memberKey, f.conversationId, f.messageId, f.messageText, f.eventId,
]

/**
 * The request for a route case, with the given key (or none). The stream route goes through
 * openStream so that a wrongly accepted request cannot hang the test: a 200 is closed at once.
 */
export async function callRoute(chat: ChatClient, route: RouteCase, f: Fixture, key: string | undefined): Promise<ChatResponse> {
  if (route.op === 'listenConversation') {
    const stream = await openStream(chat, f.conversationId, key)
    if (stream.status === 200) {
      stream.close()
      return { status: 200, headers: stream.headers, text: '', body: undefined }
    }
    const text = await Promise.race([stream.body(), new Promise<string>((r) => setTimeout(() => r(stream.received()), 2000))])
    return { status: stream.status, headers: stream.headers, text, body: parse(text) }
  }
  const body = route.body?.(f)
  return chat.request(route.method, route.path(f), { key, ...(body !== undefined && { body }) })
}

/** Text of a request, to tell echoed input from leaked data. */
export function requestText(chat: ChatClient, route: RouteCase, f: Fixture, key: string | undefined): string {
  return `${chat.url(route.path(f))} ${JSON.stringify(route.body?.(f) ?? null)} ${key ?? ''}`
}

/**
 * light-my-request gives the response a bare Writable as its socket, which has no setNoDelay();
 * SseWriter.open() calls `raw.socket?.setNoDelay(true)` and would throw under inject (never on a
 * real socket). A no-op keeps the stream usable in inject-only tests.
 */
const writableProto = Writable.prototype as unknown as { setNoDelay?: (noDelay?: boolean) => unknown }
writableProto.setNoDelay ??= function setNoDelay(this: unknown) {
  return this
}

/**
 * Opens the SSE stream of a conversation through inject without waiting for its end. Returns the
 * status and headers once they are sent, a reader of what was written, and a way to close it.
 */
export async function openStream(
  chat: ChatClient,
  conversationId: string,
  key: string | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: LightMyRequestResponse['headers']; received: () => string; ended: () => boolean; close: () => void; body: () => Promise<string> }> {
  const res = await chat.app.inject({
    method: 'GET',
    url: chat.url(`/conversations/${conversationId}/listen`),
    headers: { accept: 'text/event-stream', ...(key !== undefined && { 'x-user-key': key }), ...headers },
    payloadAsStream: true,
  })
  const stream = res.stream()
  let text = ''
  let ended = false
  const done = new Promise<string>((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8')
    })
    stream.on('end', () => {
      ended = true
      resolve(text)
    })
    stream.on('error', () => {
      ended = true
      resolve(text)
    })
  })
  const raw = res.raw.res as unknown as { destroy: () => void }
  return {
    status: res.statusCode,
    headers: res.headers,
    received: () => text,
    ended: () => ended,
    close: () => raw.destroy(),
    body: () => done,
  }
}

/** Waits until `check` holds (polling), or fails after `ms`. */
export async function waitFor(check: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
  const start = Date.now()
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Data frames of an SSE text, parsed. */
export function sseFrames(text: string): { type: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as { type: string; data: Record<string, unknown> })
}

// ---- the table-driven security matrix, shared by the per-group security files ----

export interface SecurityContext {
  h: Harness
  chat: ChatClient
  /** The victim: an owner, a member, a conversation with a message and an event. */
  fixture: Fixture
  /** A user of the same integration who takes part in nothing of the fixture. */
  outsider: { id: string; key: string; jwt: string }
  /** A second chat integration with its own user and its own fixture. */
  other: { chat: ChatClient; userId: string; key: string; fixture: Fixture }
  /** The key of a user that was deleted. */
  deletedKey: string
}

export async function startSecurityContext(): Promise<SecurityContext> {
  const h = await startParley()
  const chat = ChatClient.of(h)
  const fixture = await createFixture(chat, 'victim')
  const outsider = await chat.createUser({ id: fid('outsider'), name: 'Outsider' })
  const otherIntegration = await h.createChatIntegration()
  const otherChat = chat.withWebhook(otherIntegration.webhookId, otherIntegration.encryptionKey)
  const otherUser = await otherChat.createUser({ id: fid('tenant-b') })
  const otherFixture = await createFixture(otherChat, 'tenantb')
  const deleted = await chat.createUser()
  const gone = await chat.request('DELETE', '/users/me', { key: deleted.key, body: {} })
  if (gone.status !== 200) throw new Error(`deleteUser failed: ${gone.status} ${gone.text}`)
  return {
    h,
    chat,
    fixture,
    outsider: { id: outsider.user.id, key: outsider.key, jwt: chat.jwt(outsider.user.id) },
    other: { chat: otherChat, userId: otherUser.user.id, key: otherUser.key, fixture: otherFixture },
    deletedKey: deleted.key,
  }
}

export interface AuthCase {
  name: string
  key: (ctx: SecurityContext) => string | undefined
  status: 400 | 401
  /** Routes on which this key is legitimately accepted (a valid JWT of a new user on get-or-create). */
  skip?: string[]
}

export const AUTH_CASES: AuthCase[] = [
  { name: 'no key', key: () => undefined, status: 401 },
  { name: 'an empty key', key: () => '', status: 401 },
  { name: 'a garbage key', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).garbage, status: 401 },
  { name: 'a JWT-looking garbage key', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).jwtLookingGarbage, status: 401 },
  { name: 'the owner key with one more character', key: (c) => `${c.fixture.ownerKey}x`, status: 401 },
  { name: 'the owner key with a Bearer prefix', key: (c) => `Bearer ${c.fixture.ownerKey}`, status: 401 },
  { name: 'a key issued by another integration', key: (c) => c.other.key, status: 401 },
  { name: 'a JWT for the owner signed with another integration\'s key', key: (c) => c.other.chat.jwt(c.fixture.ownerId), status: 401 },
  { name: 'a JWT with alg none', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).none, status: 401 },
  { name: 'a JWT with alg HS512', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).hs512, status: 401 },
  { name: 'a JWT signed with a wrong secret', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).wrongSecret, status: 401 },
  { name: 'a JWT with an RS256 header', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).rs256Header, status: 401 },
  { name: 'a JWT with a tampered payload', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).tampered, status: 401 },
  { name: 'an expired JWT', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).expired, status: 401 },
  { name: 'a JWT not valid before an hour from now', key: (c) => c.chat.jwt(c.fixture.ownerId, { nbf: Math.floor(Date.now() / 1000) + 3600 }), status: 401 },
  { name: 'a 5000-character key', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).huge, status: 401 },
  { name: 'a correctly signed JWT of 5000+ characters', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).hugeJwt, status: 401 },
  { name: 'a JWT with a numeric id', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).numericId, status: 401 },
  { name: 'a JWT without id', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).missingId, status: 401 },
  { name: 'the key of a deleted user', key: (c) => c.deletedKey, status: 401 },
  { name: 'a valid JWT of a user that does not exist', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).nonExistentUser, status: 401, skip: ['getOrCreateUser'] },
  { name: 'a valid JWT whose id is invalid (a+b)', key: (c) => forgeKeys(c.fixture.ownerId, c.chat.encryptionKey).invalidId, status: 400 },
]

/** Everything that must not appear in a refused response (unless the request itself carried it). */
export const contextSecrets = (c: SecurityContext): string[] => [
  ...fixtureSecrets(c.fixture),
  ...fixtureSecrets(c.other.fixture),
  c.other.userId, c.other.key, c.outsider.key, c.chat.encryptionKey, c.other.chat.encryptionKey,
  'victim owner name', 'victim member name', 'victim-event-secret', 'tenantb owner name', 'tenantb-event-secret',
]

/**
 * For every authenticated route of `group`: the full auth matrix, unknown webhooks, non-participants,
 * the other integration, a positive control, and a final check that the victim's data is intact.
 */
export function authMatrix(group: RouteGroup, getContext: () => SecurityContext, options: { routes?: RouteCase[]; prefix?: string } = {}): void {
  const routes = (options.routes ?? AUTHENTICATED_ROUTES).filter((r) => r.group === group)
  /** The routes' API: the Chat API, or another under a prefix of the same webhook id (`webchat-api/`); fixtures are made through the Chat API. */
  const via = (chat: ChatClient) => (options.prefix ? chat.withWebhook(`${options.prefix}${chat.webhookId}`, chat.encryptionKey) : chat)

  describe.each(routes)('$op ($method)', (route) => {
    const cases = AUTH_CASES.filter((c) => !c.skip?.includes(route.op))

    it.each(cases)('refuses $name with $status', async (authCase) => {
      const ctx = getContext()
      const key = authCase.key(ctx)
      const res = await callRoute(via(ctx.chat), route, ctx.fixture, key)
      expectApiError(res, authCase.status, authCase.status === 401 ? 'Unauthorized' : 'InvalidPayload')
      expectNoLeak(res, contextSecrets(ctx), requestText(via(ctx.chat), route, ctx.fixture, key))
    })

    it('answers 404 ResourceNotFound for an unknown webhook, with or without a valid key', async () => {
      const ctx = getContext()
      for (const webhookId of ['unknown-webhook', ctx.other.chat.webhookId.replace(/.$/, (c) => (c === '0' ? '1' : '0')), 'x'.repeat(300)]) {
        const unknown = via(ctx.chat.withWebhook(webhookId))
        for (const key of [undefined, ctx.fixture.ownerKey, ctx.chat.jwt(ctx.fixture.ownerId), 'garbage']) {
          const res = await callRoute(unknown, route, ctx.fixture, key)
          expectApiError(res, 404, 'ResourceNotFound')
          expectNoLeak(res, contextSecrets(ctx), requestText(unknown, route, ctx.fixture, key))
        }
      }
    })

    if (route.conversationScoped) {
      it('answers 403 Forbidden to a user of the same integration who is not a participant (server key and JWT)', async () => {
        const ctx = getContext()
        for (const key of [ctx.outsider.key, ctx.outsider.jwt]) {
          const res = await callRoute(via(ctx.chat), route, ctx.fixture, key)
          expectApiError(res, 403, 'Forbidden')
          expectNoLeak(res, contextSecrets(ctx), requestText(via(ctx.chat), route, ctx.fixture, key))
        }
      })

      it("answers 404 to another integration's user asking for this integration's ids through its own webhook", async () => {
        const ctx = getContext()
        const res = await callRoute(via(ctx.other.chat), route, ctx.fixture, ctx.other.key)
        expectApiError(res, 404, 'ResourceNotFound')
        expectNoLeak(res, contextSecrets(ctx), requestText(via(ctx.other.chat), route, ctx.fixture, ctx.other.key))
      })

      it("answers 404 to this integration's outsider asking for the other integration's ids, without leaking them", async () => {
        const ctx = getContext()
        const res = await callRoute(via(ctx.chat), route, ctx.other.fixture, ctx.outsider.key)
        expectApiError(res, 404, 'ResourceNotFound')
        expectNoLeak(res, contextSecrets(ctx), requestText(via(ctx.chat), route, ctx.other.fixture, ctx.outsider.key))
      })
    }

    it(`positive control: the conversation owner gets ${route.okStatus}`, async () => {
      const ctx = getContext()
      const fresh = await createFixture(ctx.chat, 'control')
      const res = await callRoute(via(ctx.chat), route, fresh, fresh.ownerKey)
      expect(res.status, res.text).toBe(route.okStatus)
    })

    it(`positive control: the owner's correctly signed HS256 JWT gets ${route.okStatus} (the forgeries differ from it in one aspect)`, async () => {
      const ctx = getContext()
      const fresh = await createFixture(ctx.chat, 'jwtcontrol')
      const res = await callRoute(via(ctx.chat), route, fresh, ctx.chat.jwt(fresh.ownerId))
      expect(res.status, res.text).toBe(route.okStatus)
    })
  })

  it("leaves the victim's data intact after all refused requests", async () => {
    const ctx = getContext()
    const { chat, fixture: f } = ctx
    const me = await chat.request<{ user: UserView }>('GET', '/users/me', { key: f.ownerKey })
    expect(me.status).toBe(200)
    expect(me.body.user.name).toBe('victim owner name')
    expect((await chat.request('GET', `/conversations/${f.conversationId}`, { key: f.ownerKey })).status).toBe(200)
    const message = await chat.request<{ message: MessageView }>('GET', `/messages/${f.messageId}`, { key: f.ownerKey })
    expect(message.status).toBe(200)
    expect(message.body.message.payload).toEqual({ type: 'text', text: f.messageText })
    expect((await chat.request('GET', `/events/${f.eventId}`, { key: f.ownerKey })).status).toBe(200)
    expect((await chat.request('GET', `/conversations/${f.conversationId}/participants/${f.memberId}`, { key: f.ownerKey })).status).toBe(200)
    const participants = await chat.listAll<UserView>(f.ownerKey, `/conversations/${f.conversationId}/participants`, 'participants')
    expect(participants.items.map((u) => u.id).sort()).toEqual([f.ownerId, f.memberId].sort())
    const messages = await chat.listAll<MessageView>(f.ownerKey, `/conversations/${f.conversationId}/messages`, 'messages')
    expect(messages.items.map((m) => m.id)).toEqual([f.messageId])
    // The outsider still sees nothing of it.
    const outsiderList = await chat.listAll<ConversationView>(ctx.outsider.key, '/conversations', 'conversations')
    expect(outsiderList.items.map((c) => c.id)).not.toContain(f.conversationId)
  })
}
