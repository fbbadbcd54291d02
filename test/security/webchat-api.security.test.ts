/**
 * Botpress's webchat API (/webchat-api/{clientId}, issue #30) under the Chat API's security matrix
 * (test/helpers/chat-client.ts authMatrix): every authenticated route refuses a missing, malformed, forged or
 * deleted user's key (401/400), an unknown client id (404, with or without a key), a user of the same integration who
 * does not take part in the conversation (403, server key and JWT), and another integration's ids (404), without
 * leaking anything of them; the owner's key and JWT are the positive controls. Fixtures are made through the Chat
 * API: both APIs share the users, conversations and messages. /initialize, with a key that may not see the
 * conversation it names, and the admin secret are covered here too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authMatrix, expectApiError, expectNoLeak, contextSecrets, fid, startSecurityContext, type RouteCase, type SecurityContext } from '../helpers/chat-client.js'

/** The webchat API's authenticated routes, as the official webchat calls them. */
const WEBCHAT_ROUTES: RouteCase[] = [
  { op: 'getUser', group: 'users', method: 'GET', path: () => '/users/me', conversationScoped: false, okStatus: 200 },
  { op: 'updateUser', group: 'users', method: 'PUT', path: () => '/users/me', body: () => ({ name: 'Renamed', userData: { plan: 'x' }, attributes: { a: 'b' } }), conversationScoped: false, okStatus: 200 },
  { op: 'deleteUser', group: 'users', method: 'DELETE', path: () => '/users/me', body: () => ({}), conversationScoped: false, okStatus: 200 },
  { op: 'createConversation', group: 'conversations', method: 'POST', path: () => '/conversations', body: () => ({}), conversationScoped: false, okStatus: 201 },
  { op: 'getConversation', group: 'conversations', method: 'GET', path: (f) => `/conversations/${f.conversationId}`, conversationScoped: true, okStatus: 200 },
  { op: 'deleteConversation', group: 'conversations', method: 'DELETE', path: (f) => `/conversations/${f.conversationId}`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'listConversations', group: 'conversations', method: 'GET', path: () => '/conversations', conversationScoped: false, okStatus: 200 },
  { op: 'listConversationMessages', group: 'messages', method: 'GET', path: (f) => `/conversations/${f.conversationId}/messages`, conversationScoped: true, okStatus: 200 },
  { op: 'listenConversation', group: 'stream', method: 'GET', path: (f) => `/conversations/${f.conversationId}/listen`, conversationScoped: true, okStatus: 200 },
  { op: 'addParticipant', group: 'participants', method: 'POST', path: (f) => `/conversations/${f.conversationId}/participants`, body: (f) => ({ userId: f.memberId }), conversationScoped: true, okStatus: 200 },
  { op: 'getParticipant', group: 'participants', method: 'GET', path: (f) => `/conversations/${f.conversationId}/participants/${f.memberId}`, conversationScoped: true, okStatus: 200 },
  { op: 'removeParticipant', group: 'participants', method: 'DELETE', path: (f) => `/conversations/${f.conversationId}/participants/${f.memberId}`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'listParticipants', group: 'participants', method: 'GET', path: (f) => `/conversations/${f.conversationId}/participants`, conversationScoped: true, okStatus: 200 },
  { op: 'createMessage', group: 'messages', method: 'POST', path: () => '/messages', body: (f) => ({ conversationId: f.conversationId, payload: { type: 'text', text: 'hi', value: 'hi-value' } }), conversationScoped: true, okStatus: 201 },
  { op: 'getMessage', group: 'messages', method: 'GET', path: (f) => `/messages/${f.messageId}`, conversationScoped: true, okStatus: 200 },
  { op: 'updateMessage', group: 'messages', method: 'PUT', path: (f) => `/messages/${f.messageId}`, body: () => ({ metadata: { note: 'n' } }), conversationScoped: true, okStatus: 200 },
  { op: 'selectMessage', group: 'messages', method: 'POST', path: (f) => `/messages/${f.messageId}/select`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'deleteMessage', group: 'messages', method: 'DELETE', path: (f) => `/messages/${f.messageId}`, body: () => ({}), conversationScoped: true, okStatus: 200 },
  { op: 'createEvent', group: 'events', method: 'POST', path: () => '/events', body: (f) => ({ conversationId: f.conversationId, payload: { type: 'custom', data: { kind: 'typing' } } }), conversationScoped: true, okStatus: 201 },
  { op: 'getEvent', group: 'events', method: 'GET', path: (f) => `/events/${f.eventId}`, conversationScoped: true, okStatus: 200 },
]

describe('security: webchat API (Botpress\'s official webchat)', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  for (const group of ['users', 'conversations', 'participants', 'messages', 'events', 'stream'] as const) {
    describe(group, () => authMatrix(group, () => ctx, { routes: WEBCHAT_ROUTES, prefix: 'webchat-api/' }))
  }

  const webchat = () => ctx.chat.withWebhook(`webchat-api/${ctx.chat.webhookId}`)

  it('/initialize naming a conversation the key may not see: 403 (another integration\'s: 404), nothing of it leaks', async () => {
    const { h, fixture: f, other, outsider } = ctx
    for (const [clientId, key, status] of [[ctx.chat.webhookId, outsider.key, 403], [ctx.chat.webhookId, outsider.jwt, 403], [other.chat.webhookId, other.key, 404]] as const) {
      const res = await h.app.inject({ method: 'GET', url: `/webchat-api/${clientId}/initialize?conversationId=${f.conversationId}`, headers: { 'x-user-key': key } })
      expect(res.statusCode).toBe(status)
      expect(res.headers['content-type']).toMatch(/application\/json/)
      expectNoLeak({ status: res.statusCode, headers: res.headers as never, text: res.body, body: res.json() }, contextSecrets(ctx), `${f.conversationId} ${key}`)
    }
  })

  it('the admin secret is the integration\'s own: another integration\'s is 401, and a key minted here is unknown there', async () => {
    const minted = await webchat().request<{ key: string }>('POST', '/users/key', { body: { id: fid('backend') }, headers: { 'x-admin-secret': ctx.other.chat.encryptionKey } })
    expectApiError(minted, 401, 'Unauthorized')
    const ok = await webchat().request<{ key: string }>('POST', '/users/key', { body: { id: fid('backend') }, headers: { 'x-admin-secret': ctx.chat.encryptionKey } })
    expect(ok.status).toBe(200)
    const there = await ctx.h.app.inject({ method: 'GET', url: `/webchat-api/${ctx.other.chat.webhookId}/initialize`, headers: { 'x-user-key': ok.body.key } })
    expect(there.statusCode).toBe(401)
  })
})
