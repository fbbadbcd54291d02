import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UserView } from '../../src/domain/chat-views.js'
import { AUTHENTICATED_ROUTES, authMatrix, callRoute, contextSecrets, createFixture, expectApiError, expectNoLeak, requestText, startSecurityContext, type SecurityContext } from '../helpers/chat-client.js'

describe('security: participants', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  authMatrix('participants', () => ctx)

  describe('membership', () => {
    it('an outsider cannot add itself or anyone else', async () => {
      const { chat, fixture: f, outsider } = ctx
      for (const userId of [outsider.id, f.memberId]) {
        const res = await chat.request('POST', `/conversations/${f.conversationId}/participants`, { key: outsider.key, body: { userId } })
        expectApiError(res, 403, 'Forbidden')
        expectNoLeak(res, contextSecrets(ctx), JSON.stringify({ userId }) + f.conversationId)
      }
      expectApiError(await chat.request('GET', `/conversations/${f.conversationId}`, { key: outsider.key }), 403, 'Forbidden')
    })

    it('an outsider cannot remove anyone, the owner included', async () => {
      const { chat, fixture: f, outsider } = ctx
      for (const userId of [f.memberId, f.ownerId]) {
        expectApiError(await chat.request('DELETE', `/conversations/${f.conversationId}/participants/${userId}`, { key: outsider.key, body: {} }), 403, 'Forbidden')
      }
      expect((await chat.request('GET', `/conversations/${f.conversationId}/participants/${f.memberId}`, { key: f.ownerKey })).status).toBe(200)
    })

    it("cannot add a user of another integration, and the 404 reveals nothing of that user", async () => {
      const { chat, fixture: f, other } = ctx
      const res = await chat.request('POST', `/conversations/${f.conversationId}/participants`, { key: f.ownerKey, body: { userId: other.fixture.ownerId } })
      expectApiError(res, 404, 'ResourceNotFound')
      expect(res.text).not.toContain('tenantb owner name')
    })

    it('getParticipant of a user outside the conversation reveals nothing of that user', async () => {
      const { chat, fixture: f, outsider } = ctx
      const res = await chat.request('GET', `/conversations/${f.conversationId}/participants/${outsider.id}`, { key: f.memberKey })
      expectApiError(res, 404, 'ResourceNotFound')
      expect(res.text).not.toContain('Outsider')
    })

    it('a removed participant gets 403 again on every conversation-scoped route and cannot re-add itself', async () => {
      const { chat } = ctx
      const fresh = await createFixture(chat, 'removal')
      const removed = await chat.request('DELETE', `/conversations/${fresh.conversationId}/participants/${fresh.memberId}`, { key: fresh.ownerKey, body: {} })
      expect(removed.status).toBe(200)
      for (const route of AUTHENTICATED_ROUTES.filter((r) => r.conversationScoped)) {
        const asMember = { ...fresh, memberId: fresh.memberId }
        const res = await callRoute(chat, route, asMember, fresh.memberKey)
        expectApiError(res, 403, 'Forbidden')
        expectNoLeak(res, [fresh.messageText, fresh.ownerId, 'removal-event-secret', 'removal owner name'], requestText(chat, route, asMember, fresh.memberKey))
      }
      const list = await chat.listAll<UserView>(fresh.ownerKey, `/conversations/${fresh.conversationId}/participants`, 'participants')
      expect(list.items.map((u) => u.id)).toEqual([fresh.ownerId])
      expect((await chat.request('GET', `/messages/${fresh.messageId}`, { key: fresh.ownerKey })).status).toBe(200)
    })

    it('the owner stays a participant whatever others try', async () => {
      const { chat } = ctx
      const fresh = await createFixture(chat, 'owner')
      expectApiError(await chat.request('DELETE', `/conversations/${fresh.conversationId}/participants/${fresh.ownerId}`, { key: fresh.memberKey, body: {} }), 400, 'InvalidPayload')
      expect((await chat.request('GET', `/conversations/${fresh.conversationId}`, { key: fresh.ownerKey })).status).toBe(200)
    })
  })
})
