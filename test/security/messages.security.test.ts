import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MessageView } from '../../src/domain/chat-views.js'
import { authMatrix, b64, contextSecrets, createFixture, expectApiError, expectNoLeak, startSecurityContext, type SecurityContext } from '../helpers/chat-client.js'


describe('security: messages', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  authMatrix('messages', () => ctx)

  describe('authorship', () => {
    it('a message cannot be posted in the name of another user', async () => {
      const { chat, fixture: f } = ctx
      const body = { conversationId: f.conversationId, payload: { type: 'text', text: 'spoof' }, userId: f.ownerId }
      expectApiError(await chat.request('POST', '/messages', { key: f.memberKey, body }), 400, 'InvalidPayload')
      const ok = await chat.createMessage(f.memberKey, f.conversationId, { type: 'text', text: 'mine' })
      expect(ok.userId).toBe(f.memberId)
      await chat.request('DELETE', `/messages/${ok.id}`, { key: f.memberKey, body: {} })
    })

    it("a participant cannot delete another participant's message", async () => {
      const { chat, fixture: f } = ctx
      const res = await chat.request('DELETE', `/messages/${f.messageId}`, { key: f.memberKey, body: {} })
      expectApiError(res, 403, 'Forbidden')
      expect((await chat.request('GET', `/messages/${f.messageId}`, { key: f.ownerKey })).status).toBe(200)
    })

    it("a message id of another integration is unknown here (404), and nothing of it leaks", async () => {
      const { chat, other, outsider } = ctx
      for (const [method, key] of [['GET', outsider.key], ['DELETE', outsider.key], ['GET', ctx.fixture.ownerKey]] as const) {
        const res = await chat.request(method, `/messages/${other.fixture.messageId}`, { key, ...(method === 'DELETE' && { body: {} }) })
        expectApiError(res, 404, 'ResourceNotFound')
        expectNoLeak(res, contextSecrets(ctx), other.fixture.messageId)
      }
      expect((await other.chat.request('GET', `/messages/${other.fixture.messageId}`, { key: other.fixture.ownerKey })).status).toBe(200)
    })

    it('a refused getMessage does not reveal the conversation, author or text', async () => {
      const { chat, fixture: f, outsider } = ctx
      const res = await chat.request('GET', `/messages/${f.messageId}`, { key: outsider.key })
      expectApiError(res, 403, 'Forbidden')
      for (const secret of [f.conversationId, f.ownerId, f.messageText]) expect(res.text).not.toContain(secret)
    })
  })

  describe('listings', () => {
    it("a forged nextToken lists only the caller's conversation", async () => {
      const { chat } = ctx
      const mine = await createFixture(chat, 'lister')
      for (const nextToken of [b64([Number.MAX_SAFE_INTEGER]), b64([1_000_000])]) {
        const res = await chat.request<{ messages: MessageView[] }>('GET', `/conversations/${mine.conversationId}/messages`, { key: mine.ownerKey, query: { nextToken } })
        expect(res.status).toBe(200)
        for (const m of res.body.messages) expect(m.conversationId).toBe(mine.conversationId)
        expect(res.text).not.toContain(ctx.fixture.messageText)
        expect(res.text).not.toContain(ctx.other.fixture.messageText)
      }
    })

    it("a removed participant can no longer list or read the conversation's messages", async () => {
      const { chat } = ctx
      const fresh = await createFixture(chat, 'gone')
      await chat.request('DELETE', `/conversations/${fresh.conversationId}/participants/${fresh.memberId}`, { key: fresh.ownerKey, body: {} })
      const later = await chat.text(fresh.ownerKey, fresh.conversationId, 'after you left')
      for (const path of [`/conversations/${fresh.conversationId}/messages`, `/messages/${later.id}`, `/messages/${fresh.messageId}`]) {
        const res = await chat.request('GET', path, { key: fresh.memberKey })
        expectApiError(res, 403, 'Forbidden')
        expect(res.text).not.toContain('after you left')
        expect(res.text).not.toContain(fresh.messageText)
      }
    })
  })
})
