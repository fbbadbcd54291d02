import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConversationView, UserView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ChatClient, expectApiError, fid } from '../helpers/chat-client.js'
import { ISO_Z } from '../helpers/formats.js'


describe('Chat API: users', () => {
  let h: Harness
  let chat: ChatClient

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
  })
  afterAll(async () => h.close())

  describe('createUser (POST /users)', () => {
    it('creates a user without any field: 201 {user, key}, a generated id, ISO timestamps', async () => {
      const res = await chat.request<{ user: UserView; key: string }>('POST', '/users', { body: {} })
      expect(res.status).toBe(201)
      expect(Object.keys(res.body).sort()).toEqual(['key', 'user'])
      expect(typeof res.body.key).toBe('string')
      expect(res.body.key.length).toBeGreaterThanOrEqual(22)
      const { user } = res.body
      expect(Object.keys(user).sort()).toEqual(['createdAt', 'id', 'updatedAt'])
      expect(user.id).toMatch(/^[A-Za-z0-9_-]{1,100}$/)
      expect(user.createdAt).toMatch(ISO_Z)
      expect(user.updatedAt).toMatch(ISO_Z)
    })

    it('creates a user from a bodyless POST', async () => {
      const res = await chat.request('POST', '/users')
      expect(res.status, res.text).toBe(201)
    })

    it('keeps a caller-chosen id, name, pictureUrl and profile', async () => {
      const id = fid('alice')
      const body = { id, name: 'Alice', pictureUrl: 'https://img.example/alice.png', profile: 'likes tea' }
      const res = await chat.request<{ user: UserView; key: string }>('POST', '/users', { body })
      expect(res.status).toBe(201)
      expect(res.body.user).toMatchObject(body)
      const me = await chat.request<{ user: UserView }>('GET', '/users/me', { key: res.body.key })
      expect(me.status).toBe(200)
      expect(me.body.user).toEqual(res.body.user)
    })

    it('issues a different key to every user', async () => {
      const keys = new Set<string>()
      for (let i = 0; i < 10; i++) keys.add((await chat.createUser()).key)
      expect(keys.size).toBe(10)
    })

    it('answers 409 AlreadyExists for an id that is taken', async () => {
      const id = fid('dup')
      await chat.createUser({ id })
      expectApiError(await chat.request('POST', '/users', { body: { id } }), 409, 'AlreadyExists')
      expectApiError(await chat.request('POST', '/users', { body: { id, name: 'Other' } }), 409, 'AlreadyExists')
    })

    it('accepts ids of 1 and 100 characters among letters, digits, "-" and "_"', async () => {
      const long = `u_${fid('long')}${'a'.repeat(100)}`.slice(0, 100)
      expect(long).toHaveLength(100)
      for (const id of ['Z', '_-_', long]) {
        const res = await chat.request('POST', '/users', { body: { id } })
        expect(res.status, `${id}: ${res.text}`).toBe(201)
      }
    })

    it.each([
      ['a "+"', 'a+b'],
      ['a space', 'a b'],
      ['a slash', 'a/b'],
      ['a dot', 'a.b'],
      ['a non-ASCII letter', 'zoë'],
      ['101 characters', 'a'.repeat(101)],
      ['an empty string', ''],
    ])('answers 400 InvalidPayload for an id with %s', async (_name, id) => {
      expectApiError(await chat.request('POST', '/users', { body: { id } }), 400, 'InvalidPayload')
    })

    it.each([
      ['a numeric id', { id: 42 }],
      ['a name of 1001 characters', { name: 'n'.repeat(1001) }],
      ['a profile of 1001 characters', { profile: 'p'.repeat(1001) }],
      ['a non-string name', { name: ['Alice'] }],
      ['an unknown key', { nickname: 'al' }],
      ['a bot flag', { isBot: true }],
      ['a key of its own', { key: 'my-own-key' }],
    ])('answers 400 InvalidPayload for %s', async (_name, body) => {
      expectApiError(await chat.request('POST', '/users', { body }), 400, 'InvalidPayload')
    })

    it('accepts a profile of exactly 1000 characters', async () => {
      const res = await chat.request<{ user: UserView }>('POST', '/users', { body: { profile: 'p'.repeat(1000) } })
      expect(res.status).toBe(201)
      expect(res.body.user.profile).toHaveLength(1000)
    })
  })

  describe('getOrCreateUser (POST /users/get-or-create)', () => {
    it('returns the key owner for a server-issued key, the same user every time', async () => {
      const { user, key } = await chat.createUser({ name: 'Bob' })
      for (let i = 0; i < 3; i++) {
        const res = await chat.request<{ user: UserView }>('POST', '/users/get-or-create', { key, body: {} })
        expect(res.status).toBe(201)
        expect(res.body.user).toEqual(user)
      }
    })

    it('creates the user named by a client-minted HS256 JWT, then keeps returning it', async () => {
      const id = fid('jwt')
      const key = chat.jwt(id)
      const first = await chat.request<{ user: UserView }>('POST', '/users/get-or-create', { key, body: { name: 'Jay' } })
      expect(first.status, first.text).toBe(201)
      expect(first.body.user).toMatchObject({ id, name: 'Jay' })
      const again = await chat.request<{ user: UserView }>('POST', '/users/get-or-create', { key: chat.jwt(id), body: {} })
      expect(again.status).toBe(201)
      expect(again.body.user).toEqual(first.body.user)
      const me = await chat.request<{ user: UserView }>('GET', '/users/me', { key })
      expect(me.body.user).toEqual(first.body.user)
    })

    it('is idempotent under concurrency: one user for many simultaneous calls', async () => {
      const id = fid('race')
      const results = await Promise.all(
        Array.from({ length: 10 }, () => chat.request<{ user: UserView }>('POST', '/users/get-or-create', { key: chat.jwt(id), body: {} })),
      )
      for (const res of results) expect(res.status, res.text).toBe(201)
      expect(new Set(results.map((r) => JSON.stringify(r.body.user))).size).toBe(1)
    })

    it('accepts a JWT naming a user created through POST /users', async () => {
      const { user } = await chat.createUser({ id: fid('both') })
      const res = await chat.request<{ user: UserView }>('POST', '/users/get-or-create', { key: chat.jwt(user.id), body: {} })
      expect(res.status).toBe(201)
      expect(res.body.user).toEqual(user)
    })

    it('answers 400 InvalidPayload when the JWT id is not a valid id', async () => {
      for (const id of ['a+b', 'a'.repeat(101), '', 'x y']) {
        expectApiError(await chat.request('POST', '/users/get-or-create', { key: chat.jwt(id), body: {} }), 400, 'InvalidPayload')
      }
    })

    it('answers 401 without a key, and refuses unknown body keys', async () => {
      expectApiError(await chat.request('POST', '/users/get-or-create', { body: {} }), 401, 'Unauthorized')
      const { key } = await chat.createUser()
      expectApiError(await chat.request('POST', '/users/get-or-create', { key, body: { id: 'other' } }), 400, 'InvalidPayload')
    })
  })

  describe('getUser / updateUser (GET, PUT /users/me)', () => {
    it('returns the key owner', async () => {
      const { user, key } = await chat.createUser({ id: fid('me'), name: 'Me' })
      const res = await chat.request<{ user: UserView }>('GET', '/users/me', { key })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['user'])
      expect(res.body.user).toEqual(user)
    })

    it('updates only the given fields and moves updatedAt forward', async () => {
      const { user, key } = await chat.createUser({ name: 'Before', pictureUrl: 'https://img.example/p.png' })
      await new Promise((r) => setTimeout(r, 5))
      const res = await chat.request<{ user: UserView }>('PUT', '/users/me', { key, body: { name: 'After', profile: 'new' } })
      expect(res.status).toBe(200)
      expect(res.body.user).toMatchObject({ id: user.id, name: 'After', pictureUrl: 'https://img.example/p.png', profile: 'new', createdAt: user.createdAt })
      expect(Date.parse(res.body.user.updatedAt)).toBeGreaterThan(Date.parse(user.updatedAt))
      const me = await chat.request<{ user: UserView }>('GET', '/users/me', { key })
      expect(me.body.user).toEqual(res.body.user)
    })

    it('accepts an empty update', async () => {
      const { user, key } = await chat.createUser({ name: 'Same' })
      const res = await chat.request<{ user: UserView }>('PUT', '/users/me', { key, body: {} })
      expect(res.status).toBe(200)
      expect(res.body.user).toMatchObject({ id: user.id, name: 'Same' })
    })

    it.each([
      ['the id', { id: 'new-id' }],
      ['an unknown key', { color: 'blue' }],
      ['a numeric name', { name: 3 }],
      ['a profile of 1001 characters', { profile: 'p'.repeat(1001) }],
    ])('answers 400 InvalidPayload for an update of %s', async (_name, body) => {
      const { key } = await chat.createUser()
      expectApiError(await chat.request('PUT', '/users/me', { key, body }), 400, 'InvalidPayload')
    })
  })

  describe('deleteUser (DELETE /users/me)', () => {
    it('deletes the user: 200 {}, then its key is refused with 401', async () => {
      const { key } = await chat.createUser()
      const res = await chat.request('DELETE', '/users/me', { key, body: {} })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({})
      expectApiError(await chat.request('GET', '/users/me', { key }), 401, 'Unauthorized')
      expectApiError(await chat.request('POST', '/users/get-or-create', { key, body: {} }), 401, 'Unauthorized')
      expectApiError(await chat.request('DELETE', '/users/me', { key, body: {} }), 401, 'Unauthorized')
    })

    it('accepts a bodyless DELETE', async () => {
      const { key } = await chat.createUser()
      const res = await chat.request('DELETE', '/users/me', { key })
      expect(res.status, res.text).toBe(200)
    })

    it('refuses a non-empty DELETE body', async () => {
      const { key } = await chat.createUser()
      expectApiError(await chat.request('DELETE', '/users/me', { key, body: { id: 'x' } }), 400, 'InvalidPayload')
      expect((await chat.request('GET', '/users/me', { key })).status).toBe(200)
    })

    it('removes the user from its conversations', async () => {
      const owner = await chat.createUser()
      const leaver = await chat.createUser()
      const conversation = await chat.createConversation(owner.key)
      await chat.addParticipant(owner.key, conversation.id, leaver.user.id)
      expect((await chat.request('DELETE', '/users/me', { key: leaver.key, body: {} })).status).toBe(200)
      const { items } = await chat.listAll<UserView>(owner.key, `/conversations/${conversation.id}/participants`, 'participants')
      expect(items.map((u) => u.id)).toEqual([owner.user.id])
      expectApiError(await chat.request('GET', `/conversations/${conversation.id}/participants/${leaver.user.id}`, { key: owner.key }), 404, 'ResourceNotFound')
    })

    it('a JWT user that deleted itself is refused with 401 until get-or-create recreates it', async () => {
      const id = fid('phoenix')
      const key = chat.jwt(id)
      expect((await chat.request('POST', '/users/get-or-create', { key, body: { name: 'First' } })).status).toBe(201)
      const conversation = await chat.createConversation(key)
      expect((await chat.request('DELETE', '/users/me', { key, body: {} })).status).toBe(200)
      expectApiError(await chat.request('GET', '/users/me', { key }), 401, 'Unauthorized')
      const again = await chat.request<{ user: UserView }>('POST', '/users/get-or-create', { key, body: {} })
      expect(again.status).toBe(201)
      expect(again.body.user.name).toBeUndefined()
      // The new user with the same id has none of the old one's conversations.
      const list = await chat.request<{ conversations: ConversationView[] }>('GET', '/conversations', { key })
      expect(list.body.conversations).toEqual([])
      expectApiError(await chat.request('GET', `/conversations/${conversation.id}`, { key }), 403, 'Forbidden')
    })

    it('does not touch other users', async () => {
      const a = await chat.createUser({ name: 'Stays' })
      const b = await chat.createUser()
      await chat.request('DELETE', '/users/me', { key: b.key, body: {} })
      const me = await chat.request<{ user: UserView }>('GET', '/users/me', { key: a.key })
      expect(me.status).toBe(200)
      expect(me.body.user).toEqual(a.user)
    })

    it('frees the id: it can be created again, with a new key', async () => {
      const id = fid('reuse')
      const first = await chat.createUser({ id })
      await chat.request('DELETE', '/users/me', { key: first.key, body: {} })
      const second = await chat.createUser({ id })
      expect(second.user.id).toBe(id)
      expect(second.key).not.toBe(first.key)
      expectApiError(await chat.request('GET', '/users/me', { key: first.key }), 401, 'Unauthorized')
    })
  })

  describe('users belong to one integration', () => {
    it('allows the same id on two integrations, as two different users', async () => {
      const other = await h.createChatIntegration()
      const chatB = chat.withWebhook(other.webhookId, other.encryptionKey)
      const id = fid('twin')
      const a = await chat.createUser({ id, name: 'On A' })
      const b = await chatB.createUser({ id, name: 'On B' })
      expect(a.user.id).toBe(b.user.id)
      const meA = await chat.request<{ user: UserView }>('GET', '/users/me', { key: a.key })
      const meB = await chatB.request<{ user: UserView }>('GET', '/users/me', { key: b.key })
      expect(meA.body.user.name).toBe('On A')
      expect(meB.body.user.name).toBe('On B')
      await chatB.request('DELETE', '/users/me', { key: b.key, body: {} })
      expect((await chat.request('GET', '/users/me', { key: a.key })).status).toBe(200)
    })
  })

  describe('hello probe', () => {
    it('answers GET /{webhookId}/hello/ without a key with 200 and a body without a numeric code', async () => {
      const res = await chat.request<Record<string, unknown>>('GET', '/hello/')
      expect(res.status).toBe(200)
      expect(typeof res.body).toBe('object')
      expect(res.body.code).toBeUndefined()
    })

    it('answers 404 ResourceNotFound for an unknown webhook', async () => {
      expectApiError(await chat.withWebhook('no-such-webhook').request('GET', '/hello/'), 404, 'ResourceNotFound')
    })
  })
})
