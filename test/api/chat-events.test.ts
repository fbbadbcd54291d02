import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ChatClient, expectApiError, fid } from '../helpers/chat-client.js'
import { ISO_Z } from '../helpers/formats.js'


/** `{a: {a: ... {leaf: true}}}` with `levels` nested objects in all. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true }
  for (let i = 1; i < levels; i++) value = { a: value }
  return value
}

describe('Chat API: events', () => {
  let h: Harness
  let chat: ChatClient

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
  })
  afterAll(async () => h.close())

  const setup = () => chat.conversationWithMember('ev')

  describe('createEvent (POST /events)', () => {
    it('answers 201 {event} with exactly id, createdAt, payload, conversationId, userId', async () => {
      const { member, conversationId } = await setup()
      const payload = { type: 'typing', on: true }
      const res = await chat.request<{ event: EventView }>('POST', '/events', { key: member.key, body: { conversationId, payload } })
      expect(res.status).toBe(201)
      expect(Object.keys(res.body)).toEqual(['event'])
      const { event } = res.body
      expect(Object.keys(event).sort()).toEqual(['conversationId', 'createdAt', 'id', 'payload', 'userId'])
      expect(event).toMatchObject({ conversationId, userId: member.user.id, payload })
      expect(event.createdAt).toMatch(ISO_Z)
    })

    it('stores any JSON object payload unchanged', async () => {
      const { owner, conversationId } = await setup()
      const payloads: Record<string, unknown>[] = [
        {},
        { n: 0, f: -1.25, big: 9007199254740991, t: true, f2: false, nil: null, s: '', arr: [] },
        { nested: { list: [1, 'two', { three: [3] }], deep: nested(10) } },
        { unicode: 'héllo 世界 😀', html: '<b>x</b>', quote: '"\'\\' },
        { type: 'text', text: 'an event may look like a message' },
      ]
      for (const payload of payloads) {
        const created = await chat.createEvent(owner.key, conversationId, payload)
        expect(created.payload).toEqual(payload)
        const got = await chat.request<{ event: EventView }>('GET', `/events/${created.id}`, { key: owner.key })
        expect(got.status).toBe(200)
        expect(got.body.event).toEqual(created)
      }
    })

    it('accepts a payload nested to the maximum depth (64 levels in the whole body)', async () => {
      const { owner, conversationId } = await setup()
      // body (1) → payload (2) → … : 63 nested objects inside the body's own level.
      const payload = nested(63)
      const res = await chat.request<{ event: EventView }>('POST', '/events', { key: owner.key, body: { conversationId, payload } })
      expect(res.status, res.text).toBe(201)
      expect(res.body.event.payload).toEqual(payload)
    })

    it('answers 400 for a payload nested one level deeper', async () => {
      const { owner, conversationId } = await setup()
      expectApiError(await chat.request('POST', '/events', { key: owner.key, body: { conversationId, payload: nested(64) } }), 400, 'InvalidPayload')
    })

    it.each([
      ['no payload', (c: string) => ({ conversationId: c })],
      ['no conversationId', () => ({ payload: { a: 1 } })],
      ['an empty conversationId', () => ({ conversationId: '', payload: { a: 1 } })],
      ['a numeric conversationId', () => ({ conversationId: 1, payload: { a: 1 } })],
      ['an array payload', (c: string) => ({ conversationId: c, payload: [1, 2] })],
      ['a string payload', (c: string) => ({ conversationId: c, payload: 'typing' })],
      ['a null payload', (c: string) => ({ conversationId: c, payload: null })],
      ['an unknown top-level key', (c: string) => ({ conversationId: c, payload: {}, type: 'custom' })],
      ['a caller-chosen userId', (c: string) => ({ conversationId: c, payload: {}, userId: 'someone' })],
    ])('answers 400 InvalidPayload for %s', async (_name, body) => {
      const { owner, conversationId } = await setup()
      expectApiError(await chat.request('POST', '/events', { key: owner.key, body: body(conversationId) }), 400, 'InvalidPayload')
    })

    it('answers 404 ResourceNotFound for an unknown conversation', async () => {
      const { owner } = await setup()
      expectApiError(await chat.request('POST', '/events', { key: owner.key, body: { conversationId: fid('nope'), payload: {} } }), 404, 'ResourceNotFound')
    })

    it('does not appear among the messages', async () => {
      const { owner, conversationId } = await setup()
      await chat.createEvent(owner.key, conversationId, { a: 1 })
      const res = await chat.request<{ messages: unknown[] }>('GET', `/conversations/${conversationId}/messages`, { key: owner.key })
      expect(res.body.messages).toEqual([])
    })

    it('is timestamped after the messages before it', async () => {
      const { owner, conversationId } = await setup()
      const message = await chat.text(owner.key, conversationId, 'before')
      const event = await chat.createEvent(owner.key, conversationId, { after: true })
      expect(Date.parse(event.createdAt)).toBeGreaterThan(Date.parse(message.createdAt))
    })
  })

  describe('getEvent (GET /events/{id})', () => {
    it('returns what createEvent returned, to any participant', async () => {
      const { owner, member, conversationId } = await setup()
      const event = await chat.createEvent(owner.key, conversationId, { seen: 'all' })
      for (const key of [owner.key, member.key]) {
        const res = await chat.request<{ event: EventView }>('GET', `/events/${event.id}`, { key })
        expect(res.status).toBe(200)
        expect(Object.keys(res.body)).toEqual(['event'])
        expect(res.body.event).toEqual(event)
      }
    })

    it('answers 404 for an unknown id and for a message id', async () => {
      const { owner, conversationId } = await setup()
      expectApiError(await chat.request('GET', `/events/${fid('nope')}`, { key: owner.key }), 404, 'ResourceNotFound')
      const message = await chat.text(owner.key, conversationId, 'x')
      expectApiError(await chat.request('GET', `/events/${message.id}`, { key: owner.key }), 404, 'ResourceNotFound')
    })

    it('answers 404 once the conversation is deleted', async () => {
      const { owner, conversationId } = await setup()
      const event = await chat.createEvent(owner.key, conversationId, { a: 1 })
      await chat.request('DELETE', `/conversations/${conversationId}`, { key: owner.key, body: {} })
      expectApiError(await chat.request('GET', `/events/${event.id}`, { key: owner.key }), 404, 'ResourceNotFound')
    })
  })
})
