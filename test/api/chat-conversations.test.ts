import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConversationView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { b64, ChatClient, expectApiError, fid } from '../helpers/chat-client.js'
import { ISO_Z } from '../helpers/formats.js'


describe('Chat API: conversations', () => {
  let h: Harness
  let chat: ChatClient

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
  })
  afterAll(async () => h.close())

  describe('createConversation (POST /conversations)', () => {
    it('creates a conversation with a generated id: 201 {conversation: {id, createdAt, updatedAt}}', async () => {
      const { key } = await chat.createUser()
      const res = await chat.request<{ conversation: ConversationView }>('POST', '/conversations', { key, body: {} })
      expect(res.status).toBe(201)
      expect(Object.keys(res.body)).toEqual(['conversation'])
      expect(Object.keys(res.body.conversation).sort()).toEqual(['createdAt', 'id', 'updatedAt'])
      expect(res.body.conversation.id).toMatch(/^[A-Za-z0-9_-]{1,100}$/)
      expect(res.body.conversation.createdAt).toMatch(ISO_Z)
      expect(res.body.conversation.updatedAt).toMatch(ISO_Z)
    })

    it('keeps a caller-chosen id and makes the caller its first participant', async () => {
      const { user, key } = await chat.createUser()
      const id = fid('conv')
      const res = await chat.request<{ conversation: ConversationView }>('POST', '/conversations', { key, body: { id } })
      expect(res.status).toBe(201)
      expect(res.body.conversation.id).toBe(id)
      const participants = await chat.request<{ participants: { id: string }[] }>('GET', `/conversations/${id}/participants`, { key })
      expect(participants.body.participants.map((p) => p.id)).toEqual([user.id])
    })

    it('creates from a bodyless POST', async () => {
      const { key } = await chat.createUser()
      expect((await chat.request('POST', '/conversations', { key })).status).toBe(201)
    })

    it('answers 409 AlreadyExists for a taken id, whoever asks', async () => {
      const a = await chat.createUser()
      const b = await chat.createUser()
      const id = fid('taken')
      await chat.createConversation(a.key, id)
      expectApiError(await chat.request('POST', '/conversations', { key: a.key, body: { id } }), 409, 'AlreadyExists')
      expectApiError(await chat.request('POST', '/conversations', { key: b.key, body: { id } }), 409, 'AlreadyExists')
    })

    it.each([['a+b'], ['a b'], ['a'.repeat(101)], [''], ['ü'], ['a/b']])('answers 400 InvalidPayload for the id %j', async (id) => {
      const { key } = await chat.createUser()
      expectApiError(await chat.request('POST', '/conversations', { key, body: { id } }), 400, 'InvalidPayload')
    })

    it('answers 400 for a non-string id and for unknown keys', async () => {
      const { key } = await chat.createUser()
      expectApiError(await chat.request('POST', '/conversations', { key, body: { id: 5 } }), 400, 'InvalidPayload')
      expectApiError(await chat.request('POST', '/conversations', { key, body: { ownerId: 'x' } }), 400, 'InvalidPayload')
      expectApiError(await chat.request('POST', '/conversations', { key, body: { tags: {} } }), 400, 'InvalidPayload')
    })
  })

  describe('getOrCreateConversation (POST /conversations/get-or-create)', () => {
    it('creates then returns the same conversation (idempotent)', async () => {
      const { key } = await chat.createUser()
      const id = fid('goc')
      const first = await chat.request<{ conversation: ConversationView }>('POST', '/conversations/get-or-create', { key, body: { id } })
      expect(first.status).toBe(201)
      expect(first.body.conversation.id).toBe(id)
      for (let i = 0; i < 3; i++) {
        const again = await chat.request<{ conversation: ConversationView }>('POST', '/conversations/get-or-create', { key, body: { id } })
        expect(again.status).toBe(201)
        expect(again.body.conversation.id).toBe(id)
        expect(again.body.conversation.createdAt).toBe(first.body.conversation.createdAt)
      }
      const list = await chat.listAll<ConversationView>(key, '/conversations', 'conversations')
      expect(list.items.map((c) => c.id)).toEqual([id])
    })

    it('returns an existing conversation created with createConversation, also to a participant', async () => {
      const owner = await chat.createUser()
      const member = await chat.createUser()
      const conversation = await chat.createConversation(owner.key, fid('existing'))
      await chat.addParticipant(owner.key, conversation.id, member.user.id)
      const res = await chat.request<{ conversation: ConversationView }>('POST', '/conversations/get-or-create', { key: member.key, body: { id: conversation.id } })
      expect(res.status).toBe(201)
      expect(res.body.conversation.id).toBe(conversation.id)
      expect(res.body.conversation.createdAt).toBe(conversation.createdAt)
    })

    it('is idempotent under concurrency', async () => {
      const { key } = await chat.createUser()
      const id = fid('race')
      const results = await Promise.all(Array.from({ length: 10 }, () => chat.request<{ conversation: ConversationView }>('POST', '/conversations/get-or-create', { key, body: { id } })))
      for (const res of results) expect(res.status, res.text).toBe(201)
      expect(new Set(results.map((r) => r.body.conversation.createdAt)).size).toBe(1)
    })

    it('answers 400 for a missing, invalid or non-string id and unknown keys', async () => {
      const { key } = await chat.createUser()
      for (const body of [{}, { id: 'a+b' }, { id: '' }, { id: 'x'.repeat(101) }, { id: 3 }, { id: fid('ok'), extra: 1 }]) {
        expectApiError(await chat.request('POST', '/conversations/get-or-create', { key, body }), 400, 'InvalidPayload')
      }
    })
  })

  describe('getConversation (GET /conversations/{id})', () => {
    it('returns the conversation as created', async () => {
      const { key } = await chat.createUser()
      const conversation = await chat.createConversation(key, fid('get'))
      const res = await chat.request<{ conversation: ConversationView }>('GET', `/conversations/${conversation.id}`, { key })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['conversation'])
      expect(res.body.conversation.id).toBe(conversation.id)
      expect(res.body.conversation.createdAt).toBe(conversation.createdAt)
    })

    it('answers 404 ResourceNotFound for an unknown id', async () => {
      const { key } = await chat.createUser()
      expectApiError(await chat.request('GET', `/conversations/${fid('nope')}`, { key }), 404, 'ResourceNotFound')
    })
  })

  describe('deleteConversation (DELETE /conversations/{id})', () => {
    it('deletes the conversation with its messages, events and participants', async () => {
      const owner = await chat.createUser()
      const member = await chat.createUser()
      const conversation = await chat.createConversation(owner.key, fid('doomed'))
      await chat.addParticipant(owner.key, conversation.id, member.user.id)
      const m1 = await chat.text(owner.key, conversation.id, 'first')
      const m2 = await chat.text(member.key, conversation.id, 'second')
      const event = await chat.createEvent(owner.key, conversation.id, { k: 'v' })

      const res = await chat.request('DELETE', `/conversations/${conversation.id}`, { key: owner.key, body: {} })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({})

      expectApiError(await chat.request('GET', `/conversations/${conversation.id}`, { key: owner.key }), 404, 'ResourceNotFound')
      for (const m of [m1, m2]) {
        expectApiError(await chat.request('GET', `/messages/${m.id}`, { key: owner.key }), 404, 'ResourceNotFound')
        expectApiError(await chat.request('GET', `/messages/${m.id}`, { key: member.key }), 404, 'ResourceNotFound')
      }
      expectApiError(await chat.request('GET', `/events/${event.id}`, { key: owner.key }), 404, 'ResourceNotFound')
      expectApiError(await chat.request('GET', `/conversations/${conversation.id}/messages`, { key: owner.key }), 404, 'ResourceNotFound')
      expectApiError(await chat.request('GET', `/conversations/${conversation.id}/participants`, { key: member.key }), 404, 'ResourceNotFound')
      for (const key of [owner.key, member.key]) {
        const list = await chat.listAll<ConversationView>(key, '/conversations', 'conversations')
        expect(list.items.map((c) => c.id)).not.toContain(conversation.id)
      }
      expectApiError(await chat.request('DELETE', `/conversations/${conversation.id}`, { key: owner.key, body: {} }), 404, 'ResourceNotFound')
    })

    it('frees the id: a new conversation with it starts empty', async () => {
      const owner = await chat.createUser()
      const id = fid('reborn')
      await chat.createConversation(owner.key, id)
      await chat.text(owner.key, id, 'old')
      await chat.request('DELETE', `/conversations/${id}`, { key: owner.key, body: {} })
      const other = await chat.createUser()
      await chat.createConversation(other.key, id)
      const messages = await chat.request<{ messages: unknown[] }>('GET', `/conversations/${id}/messages`, { key: other.key })
      expect(messages.status).toBe(200)
      expect(messages.body.messages).toEqual([])
      // The old owner is not a participant of the new conversation.
      expectApiError(await chat.request('GET', `/conversations/${id}`, { key: owner.key }), 403, 'Forbidden')
    })

    it('answers 404 for an unknown id and 400 for a non-empty body', async () => {
      const { key } = await chat.createUser()
      expectApiError(await chat.request('DELETE', `/conversations/${fid('nope')}`, { key, body: {} }), 404, 'ResourceNotFound')
      const conversation = await chat.createConversation(key)
      expectApiError(await chat.request('DELETE', `/conversations/${conversation.id}`, { key, body: { force: true } }), 400, 'InvalidPayload')
      expect((await chat.request('GET', `/conversations/${conversation.id}`, { key })).status).toBe(200)
    })
  })

  describe('listConversations (GET /conversations)', () => {
    it('pages over many conversations without skipping or repeating, newest first', async () => {
      const owner = await chat.createUser()
      const inviter = await chat.createUser()
      const created: string[] = []
      for (let i = 0; i < 38; i++) created.push((await chat.createConversation(owner.key, `list-${i}-${fid('c')}`)).id)
      for (let i = 0; i < 5; i++) {
        const id = fid('invited')
        await chat.createConversation(inviter.key, id)
        await chat.addParticipant(inviter.key, id, owner.user.id)
        created.push(id)
      }
      for (let i = 0; i < 4; i++) {
        const id = fid('goc')
        await chat.request('POST', '/conversations/get-or-create', { key: owner.key, body: { id } })
        created.push(id)
      }
      // Someone else's conversations never show up.
      for (let i = 0; i < 3; i++) await chat.createConversation(inviter.key)

      const { items, pages, tokens } = await chat.listAll<ConversationView>(owner.key, '/conversations', 'conversations')
      expect(items).toHaveLength(created.length)
      expect(new Set(items.map((c) => c.id)).size).toBe(items.length)
      expect(new Set(items.map((c) => c.id))).toEqual(new Set(created))
      expect(pages).toBe(Math.ceil(created.length / 20))
      expect(tokens).toHaveLength(pages - 1)
      const times = items.map((c) => Date.parse(c.createdAt))
      for (let i = 1; i < times.length; i++) expect(times[i]!).toBeLessThanOrEqual(times[i - 1]!)
    })

    it('pages of at most 20 items; the last page has no nextToken', async () => {
      const { key } = await chat.createUser()
      for (let i = 0; i < 21; i++) await chat.createConversation(key)
      const first = await chat.request<{ conversations: ConversationView[]; meta: { nextToken?: string } }>('GET', '/conversations', { key })
      expect(first.status).toBe(200)
      expect(first.body.conversations).toHaveLength(20)
      expect(typeof first.body.meta.nextToken).toBe('string')
      const second = await chat.request<{ conversations: ConversationView[]; meta: { nextToken?: string } }>('GET', '/conversations', { key, query: { nextToken: first.body.meta.nextToken! } })
      expect(second.body.conversations).toHaveLength(1)
      expect(second.body.meta).toEqual({})
    })

    it('returns an empty list with empty meta for a user without conversations', async () => {
      const { key } = await chat.createUser()
      const res = await chat.request('GET', '/conversations', { key })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ conversations: [], meta: {} })
    })

    it('does not repeat items when conversations are created between pages', async () => {
      const { key } = await chat.createUser()
      const before: string[] = []
      for (let i = 0; i < 30; i++) before.push((await chat.createConversation(key)).id)
      const first = await chat.request<{ conversations: ConversationView[]; meta: { nextToken?: string } }>('GET', '/conversations', { key })
      for (let i = 0; i < 5; i++) await chat.createConversation(key)
      const seen = first.body.conversations.map((c) => c.id)
      let nextToken = first.body.meta.nextToken
      while (nextToken) {
        const page = await chat.request<{ conversations: ConversationView[]; meta: { nextToken?: string } }>('GET', '/conversations', { key, query: { nextToken } })
        seen.push(...page.body.conversations.map((c) => c.id))
        nextToken = page.body.meta.nextToken
      }
      expect(new Set(seen).size).toBe(seen.length)
      expect(new Set(seen)).toEqual(new Set(before))
    })

    it.each([
      ['garbage characters', '!!not a token!!'],
      ['base64 of a non-array', b64({ after: 1 })],
      ['a cursor of the wrong shape', b64([1])],
      ['a cursor with wrong types', b64(['x', 1])],
      ['base64 of invalid JSON', Buffer.from('[1,').toString('base64url')],
      ['a 600-character token', 'A'.repeat(600)],
    ])('answers 400 InvalidQuery for a nextToken that is %s', async (_name, nextToken) => {
      const { key } = await chat.createUser()
      await chat.createConversation(key)
      expectApiError(await chat.request('GET', '/conversations', { key, query: { nextToken } }), 400, 'InvalidQuery')
    })

    it('answers 400 InvalidQuery for a nextToken of another list (messages)', async () => {
      const { key } = await chat.createUser()
      const conversation = await chat.createConversation(key)
      for (let i = 0; i < 21; i++) await chat.text(key, conversation.id, `m${i}`)
      const messages = await chat.request<{ meta: { nextToken?: string } }>('GET', `/conversations/${conversation.id}/messages`, { key })
      expect(messages.body.meta.nextToken).toBeDefined()
      expectApiError(await chat.request('GET', '/conversations', { key, query: { nextToken: messages.body.meta.nextToken! } }), 400, 'InvalidQuery')
    })
  })
})
