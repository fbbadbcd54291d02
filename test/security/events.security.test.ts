import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authMatrix, contextSecrets, createFixture, expectApiError, expectNoLeak, startSecurityContext, type SecurityContext } from '../helpers/chat-client.js'

describe('security: events', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  authMatrix('events', () => ctx)

  it('an event cannot be sent in the name of another user or with a chosen id', async () => {
    const { chat, fixture: f } = ctx
    for (const extra of [{ userId: f.ownerId }, { id: 'chosen' }, { isBot: true }]) {
      expectApiError(await chat.request('POST', '/events', { key: f.memberKey, body: { conversationId: f.conversationId, payload: {}, ...extra } }), 400, 'InvalidPayload')
    }
    const ok = await chat.createEvent(f.memberKey, f.conversationId, { fine: true })
    expect(ok.userId).toBe(f.memberId)
  })

  it('an event id of another integration is unknown here (404), and nothing of it leaks', async () => {
    const { chat, other } = ctx
    for (const key of [ctx.outsider.key, ctx.fixture.ownerKey]) {
      const res = await chat.request('GET', `/events/${other.fixture.eventId}`, { key })
      expectApiError(res, 404, 'ResourceNotFound')
      expectNoLeak(res, contextSecrets(ctx), other.fixture.eventId)
    }
  })

  it('a refused getEvent does not reveal the payload, conversation or author', async () => {
    const { chat, fixture: f, outsider } = ctx
    const res = await chat.request('GET', `/events/${f.eventId}`, { key: outsider.key })
    expectApiError(res, 403, 'Forbidden')
    for (const secret of ['victim-event-secret', f.conversationId, f.ownerId]) expect(res.text).not.toContain(secret)
  })

  it('a removed participant can no longer read events nor send them', async () => {
    const { chat } = ctx
    const fresh = await createFixture(chat, 'evgone')
    await chat.request('DELETE', `/conversations/${fresh.conversationId}/participants/${fresh.memberId}`, { key: fresh.ownerKey, body: {} })
    expectApiError(await chat.request('GET', `/events/${fresh.eventId}`, { key: fresh.memberKey }), 403, 'Forbidden')
    expectApiError(await chat.request('POST', '/events', { key: fresh.memberKey, body: { conversationId: fresh.conversationId, payload: { x: 1 } } }), 403, 'Forbidden')
  })
})
