import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MessageView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { b64, ChatClient, expectApiError, fid } from '../helpers/chat-client.js'
import { ISO_Z } from '../helpers/formats.js'


describe('Chat API: messages', () => {
  let h: Harness
  let chat: ChatClient

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
  })
  afterAll(async () => h.close())

  const setup = () => chat.conversationWithMember('mc')

  describe('createMessage (POST /messages)', () => {
    it('answers 201 {message} with exactly id, createdAt, payload, userId, conversationId', async () => {
      const { owner, conversationId } = await setup()
      const res = await chat.request<{ message: MessageView }>('POST', '/messages', { key: owner.key, body: { conversationId, payload: { type: 'text', text: 'hi' } } })
      expect(res.status).toBe(201)
      expect(Object.keys(res.body)).toEqual(['message'])
      const { message } = res.body
      expect(Object.keys(message).sort()).toEqual(['conversationId', 'createdAt', 'id', 'payload', 'userId'])
      expect(message.userId).toBe(owner.user.id)
      expect(message.conversationId).toBe(conversationId)
      expect(message.payload).toEqual({ type: 'text', text: 'hi' })
      expect(message.createdAt).toMatch(ISO_Z)
      expect(typeof message.id).toBe('string')
    })

    it('gives every message a distinct id', async () => {
      const { owner, conversationId } = await setup()
      const ids = new Set<string>()
      for (let i = 0; i < 20; i++) ids.add((await chat.text(owner.key, conversationId, `n${i}`)).id)
      expect(ids.size).toBe(20)
    })

    it('answers 404 ResourceNotFound for an unknown conversation', async () => {
      const { owner } = await setup()
      expectApiError(
        await chat.request('POST', '/messages', { key: owner.key, body: { conversationId: fid('nope'), payload: { type: 'text', text: 'x' } } }),
        404,
        'ResourceNotFound',
      )
    })

    it('keeps createdAt strictly increasing for 50 messages posted at once', async () => {
      const { owner, member, conversationId } = await setup()
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          chat.request<{ message: MessageView }>('POST', '/messages', {
            key: i % 2 === 0 ? owner.key : member.key,
            body: { conversationId, payload: { type: 'text', text: `burst ${i}` } },
          }),
        ),
      )
      for (const res of results) expect(res.status, res.text).toBe(201)
      const created = results.map((r) => r.body.message)
      expect(new Set(created.map((m) => m.createdAt)).size).toBe(50)
      expect(new Set(created.map((m) => m.id)).size).toBe(50)

      const { items } = await chat.listAll<MessageView>(owner.key, `/conversations/${conversationId}/messages`, 'messages')
      expect(items).toHaveLength(50)
      const oldestFirst = [...items].reverse()
      for (let i = 1; i < oldestFirst.length; i++) {
        expect(Date.parse(oldestFirst[i]!.createdAt)).toBeGreaterThan(Date.parse(oldestFirst[i - 1]!.createdAt))
      }
      // What the create calls returned is what the list returns.
      const byId = new Map(created.map((m) => [m.id, m]))
      for (const m of items) expect(m).toEqual(byId.get(m.id))
    })

    it('keeps createdAt strictly increasing when events and messages interleave', async () => {
      const { owner, conversationId } = await setup()
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0 ? chat.text(owner.key, conversationId, `m${i}`).then((m) => m.createdAt) : chat.createEvent(owner.key, conversationId, { i }).then((e) => e.createdAt),
        ),
      )
      expect(new Set(results).size).toBe(20)
    })
  })

  describe('getMessage (GET /messages/{id})', () => {
    it('returns what createMessage returned, to any participant', async () => {
      const { owner, member, conversationId } = await setup()
      const message = await chat.createMessage(owner.key, conversationId, { type: 'image', imageUrl: 'https://img.example/x.png' }, { origin: 'test' })
      for (const key of [owner.key, member.key]) {
        const res = await chat.request<{ message: MessageView }>('GET', `/messages/${message.id}`, { key })
        expect(res.status).toBe(200)
        expect(Object.keys(res.body)).toEqual(['message'])
        expect(res.body.message).toEqual(message)
      }
    })

    it('answers 404 for an unknown id and for an event id', async () => {
      const { owner, conversationId } = await setup()
      expectApiError(await chat.request('GET', `/messages/${fid('nope')}`, { key: owner.key }), 404, 'ResourceNotFound')
      const event = await chat.createEvent(owner.key, conversationId, { a: 1 })
      expectApiError(await chat.request('GET', `/messages/${event.id}`, { key: owner.key }), 404, 'ResourceNotFound')
    })
  })

  describe('deleteMessage (DELETE /messages/{id})', () => {
    it('lets the author delete: 200 {}, then 404 on get and absent from the list', async () => {
      const { owner, member, conversationId } = await setup()
      const keep = await chat.text(owner.key, conversationId, 'keep')
      const drop = await chat.text(member.key, conversationId, 'drop')
      const res = await chat.request('DELETE', `/messages/${drop.id}`, { key: member.key, body: {} })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({})
      expectApiError(await chat.request('GET', `/messages/${drop.id}`, { key: member.key }), 404, 'ResourceNotFound')
      expectApiError(await chat.request('GET', `/messages/${drop.id}`, { key: owner.key }), 404, 'ResourceNotFound')
      const { items } = await chat.listAll<MessageView>(owner.key, `/conversations/${conversationId}/messages`, 'messages')
      expect(items.map((m) => m.id)).toEqual([keep.id])
      expectApiError(await chat.request('DELETE', `/messages/${drop.id}`, { key: member.key, body: {} }), 404, 'ResourceNotFound')
    })

    it('answers 403 Forbidden to another participant, the conversation owner included; the message stays', async () => {
      const { owner, member, conversationId } = await setup()
      const byMember = await chat.text(member.key, conversationId, 'mine')
      const byOwner = await chat.text(owner.key, conversationId, 'ours?')
      expectApiError(await chat.request('DELETE', `/messages/${byMember.id}`, { key: owner.key, body: {} }), 403, 'Forbidden')
      expectApiError(await chat.request('DELETE', `/messages/${byOwner.id}`, { key: member.key, body: {} }), 403, 'Forbidden')
      expect((await chat.request('GET', `/messages/${byMember.id}`, { key: owner.key })).status).toBe(200)
      expect((await chat.request('GET', `/messages/${byOwner.id}`, { key: member.key })).status).toBe(200)
    })

    it('answers 404 for an unknown id and 400 for a non-empty body', async () => {
      const { owner, conversationId } = await setup()
      expectApiError(await chat.request('DELETE', `/messages/${fid('nope')}`, { key: owner.key, body: {} }), 404, 'ResourceNotFound')
      const message = await chat.text(owner.key, conversationId, 'x')
      expectApiError(await chat.request('DELETE', `/messages/${message.id}`, { key: owner.key, body: { reason: 'x' } }), 400, 'InvalidPayload')
      expect((await chat.request('GET', `/messages/${message.id}`, { key: owner.key })).status).toBe(200)
    })

    it('accepts a bodyless DELETE', async () => {
      const { owner, conversationId } = await setup()
      const message = await chat.text(owner.key, conversationId, 'x')
      expect((await chat.request('DELETE', `/messages/${message.id}`, { key: owner.key })).status).toBe(200)
    })
  })

  describe('listMessages (GET /conversations/{id}/messages)', () => {
    it('pages over 45 messages without skipping or repeating, newest first', async () => {
      const { owner, member, conversationId } = await setup()
      const sent: MessageView[] = []
      for (let i = 0; i < 45; i++) sent.push(await chat.text(i % 3 === 0 ? member.key : owner.key, conversationId, `msg ${i}`))
      const { items, pages } = await chat.listAll<MessageView>(member.key, `/conversations/${conversationId}/messages`, 'messages')
      expect(pages).toBe(3)
      expect(items).toEqual([...sent].reverse())
    })

    it('pages of at most 20; the last page carries no nextToken', async () => {
      const { owner, conversationId } = await setup()
      for (let i = 0; i < 20; i++) await chat.text(owner.key, conversationId, `m${i}`)
      const only = await chat.request<{ messages: MessageView[]; meta: { nextToken?: string } }>('GET', `/conversations/${conversationId}/messages`, { key: owner.key })
      expect(only.body.messages).toHaveLength(20)
      // Exactly one page's worth: either no token, or a token leading to an empty last page.
      if (only.body.meta.nextToken !== undefined) {
        const rest = await chat.request<{ messages: MessageView[]; meta: { nextToken?: string } }>('GET', `/conversations/${conversationId}/messages`, { key: owner.key, query: { nextToken: only.body.meta.nextToken } })
        expect(rest.body).toEqual({ messages: [], meta: {} })
      }
    })

    it('does not repeat or skip when messages arrive or are deleted between pages', async () => {
      const { owner, conversationId } = await setup()
      const sent: string[] = []
      for (let i = 0; i < 30; i++) sent.push((await chat.text(owner.key, conversationId, `m${i}`)).id)
      const first = await chat.request<{ messages: MessageView[]; meta: { nextToken?: string } }>('GET', `/conversations/${conversationId}/messages`, { key: owner.key })
      for (let i = 0; i < 5; i++) await chat.text(owner.key, conversationId, `late ${i}`)
      await chat.request('DELETE', `/messages/${sent[0]!}`, { key: owner.key, body: {} })
      const second = await chat.request<{ messages: MessageView[]; meta: { nextToken?: string } }>('GET', `/conversations/${conversationId}/messages`, { key: owner.key, query: { nextToken: first.body.meta.nextToken! } })
      const seen = [...first.body.messages, ...second.body.messages].map((m) => m.id)
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen).toEqual([...sent.slice(1)].reverse())
    })

    it('returns an empty list with empty meta for a new conversation', async () => {
      const { owner, conversationId } = await setup()
      const res = await chat.request('GET', `/conversations/${conversationId}/messages`, { key: owner.key })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ messages: [], meta: {} })
    })

    it.each([
      ['garbage', 'not a token'],
      ['the wrong shape', b64([1, 'x'])],
      ['a non-integer', b64([1.5])],
      ['a string seq', b64(['5'])],
      ['too long', 'C'.repeat(513)],
    ])('answers 400 InvalidQuery for a nextToken with %s', async (_name, nextToken) => {
      const { owner, conversationId } = await setup()
      expectApiError(await chat.request('GET', `/conversations/${conversationId}/messages`, { key: owner.key, query: { nextToken } }), 400, 'InvalidQuery')
    })

    it('answers 404 for an unknown conversation', async () => {
      const { owner } = await setup()
      expectApiError(await chat.request('GET', `/conversations/${fid('nope')}/messages`, { key: owner.key }), 404, 'ResourceNotFound')
    })
  })
})
