import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConversationView } from '../../src/domain/chat-views.js'
import { authMatrix, b64, contextSecrets, expectApiError, expectNoLeak, fid, startSecurityContext, type SecurityContext } from '../helpers/chat-client.js'


describe('security: conversations', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  authMatrix('conversations', () => ctx)

  describe('joining by id is impossible', () => {
    it("getOrCreateConversation on someone else's conversation answers 403 and does not join", async () => {
      const { chat, fixture: f, outsider } = ctx
      const res = await chat.request('POST', '/conversations/get-or-create', { key: outsider.key, body: { id: f.conversationId } })
      expectApiError(res, 403, 'Forbidden')
      expectNoLeak(res, contextSecrets(ctx), JSON.stringify({ id: f.conversationId }))
      expectApiError(await chat.request('GET', `/conversations/${f.conversationId}`, { key: outsider.key }), 403, 'Forbidden')
      expectApiError(await chat.request('GET', `/conversations/${f.conversationId}/participants/${outsider.id}`, { key: f.ownerKey }), 404, 'ResourceNotFound')
    })

    it("createConversation with someone else's id answers 409 and does not join", async () => {
      const { chat, fixture: f, outsider } = ctx
      const res = await chat.request('POST', '/conversations', { key: outsider.key, body: { id: f.conversationId } })
      expectApiError(res, 409, 'AlreadyExists')
      expectNoLeak(res, contextSecrets(ctx), JSON.stringify({ id: f.conversationId }))
      expectApiError(await chat.request('GET', `/conversations/${f.conversationId}`, { key: outsider.key }), 403, 'Forbidden')
    })

    it('a JWT user named like the owner, on another integration, gets nothing of the owner', async () => {
      const { other, fixture: f } = ctx
      const twin = other.chat.jwt(f.ownerId)
      expect((await other.chat.request('POST', '/users/get-or-create', { key: twin, body: {} })).status).toBe(201)
      expectApiError(await other.chat.request('GET', `/conversations/${f.conversationId}`, { key: twin }), 404, 'ResourceNotFound')
      const list = await other.chat.request<{ conversations: ConversationView[] }>('GET', '/conversations', { key: twin })
      expect(list.body.conversations).toEqual([])
    })
  })

  describe('listings', () => {
    it("listConversations shows only the caller's conversations", async () => {
      const { chat, fixture: f, outsider } = ctx
      const own = await chat.createConversation(outsider.key)
      const res = await chat.listAll<ConversationView>(outsider.key, '/conversations', 'conversations')
      expect(res.items.map((c) => c.id)).toEqual([own.id])
      const member = await chat.listAll<ConversationView>(f.memberKey, '/conversations', 'conversations')
      expect(member.items.map((c) => c.id)).toEqual([f.conversationId])
    })

    it('a forged nextToken cannot reach other users or integrations', async () => {
      const { chat, outsider } = ctx
      for (const nextToken of [b64([Date.now() + 86_400_000, 'zzzzzzzz']), b64([Number.MAX_SAFE_INTEGER, '~']), b64([0, ''])]) {
        const res = await chat.request<{ conversations: ConversationView[] }>('GET', '/conversations', { key: outsider.key, query: { nextToken } })
        expect(res.status).toBe(200)
        const ids = res.body.conversations.map((c) => c.id)
        expect(ids).not.toContain(ctx.fixture.conversationId)
        expect(ids).not.toContain(ctx.other.fixture.conversationId)
        expectNoLeak({ ...res, text: res.text }, contextSecrets(ctx), nextToken)
      }
    })

    it('a forged nextToken with SQL in it is a 400, not a query', async () => {
      const { chat, outsider } = ctx
      for (const nextToken of [b64([1, "' OR 1=1 --"]), b64(['1 OR 1=1', 'x']), "'; DROP TABLE conversations; --"]) {
        const res = await chat.request<{ conversations: ConversationView[] }>('GET', '/conversations', { key: outsider.key, query: { nextToken } })
        if (res.status === 200) {
          expect(res.body.conversations.map((c) => c.id)).not.toContain(ctx.fixture.conversationId)
        } else {
          expectApiError(res, 400, 'InvalidQuery')
        }
      }
      expect((await chat.request('GET', `/conversations/${ctx.fixture.conversationId}`, { key: ctx.fixture.ownerKey })).status).toBe(200)
    })
  })

  describe('integrations are separate namespaces', () => {
    it("the same conversation id on another integration is another conversation; neither sees the other's content", async () => {
      const { chat, other } = ctx
      const id = fid('mirror')
      const a = await chat.createUser()
      await chat.createConversation(a.key, id)
      await chat.text(a.key, id, 'A-only text')
      const res = await other.chat.request<{ conversation: ConversationView }>('POST', '/conversations', { key: other.key, body: { id } })
      expect(res.status).toBe(201)
      const messages = await other.chat.request<{ messages: unknown[] }>('GET', `/conversations/${id}/messages`, { key: other.key })
      expect(messages.body.messages).toEqual([])
      expect(messages.text).not.toContain('A-only text')
      // Deleting B's copy leaves A's.
      await other.chat.request('DELETE', `/conversations/${id}`, { key: other.key, body: {} })
      expect((await chat.request('GET', `/conversations/${id}`, { key: a.key })).status).toBe(200)
    })

    it("deleting through another integration's webhook cannot reach this integration's conversation", async () => {
      const { chat, other, fixture: f } = ctx
      expectApiError(await other.chat.request('DELETE', `/conversations/${f.conversationId}`, { key: other.key, body: {} }), 404, 'ResourceNotFound')
      expect((await chat.request('GET', `/conversations/${f.conversationId}`, { key: f.ownerKey })).status).toBe(200)
    })
  })
})
