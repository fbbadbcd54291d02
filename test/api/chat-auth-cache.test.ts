/**
 * The Chat API's per-request lookups are cached (webhook id → integration, user key → user): every
 * change to what they designate must be seen by the very next request, with the cache warm; on
 * PostgreSQL also by another instance on the same database, as soon as its notification arrives.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { UserView } from '../../src/domain/chat-views.js'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { testStoreKind } from '../helpers/pg.js'
import { ChatClient, expectApiError } from '../helpers/chat-client.js'

describe('Chat API: cached webhook and user-key lookups', () => {
  let h: Harness
  let chat: ChatClient

  beforeAll(async () => {
    h = await startParley()
    chat = new ChatClient(h.app, h.credentials.chat.webhookId, h.credentials.chat.encryptionKey)
  })
  afterAll(async () => h.close())

  const admin = async (method: 'POST' | 'PUT' | 'DELETE', path: string, body: unknown = {}) => {
    const res = await h.app.inject({
      method, url: `/v1/admin${path}`, payload: body as Record<string, unknown>,
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
    })
    expect(res.statusCode, res.body).toBeLessThan(300)
    return JSON.parse(res.body) as { bot: { id: string; integrations: { chat: { webhookId: string; configuration: { encryptionKey: string } } } } }
  }

  /** A bot of its own with a user, a conversation and a message: webhook and key are cached after this. */
  async function warmBot() {
    const { bot } = await admin('POST', '/bots', { name: 'cache probe', integrations: { chat: { enabled: true } } })
    const client = chat.withWebhook(bot.integrations.chat.webhookId, bot.integrations.chat.configuration.encryptionKey)
    const { key } = await client.createUser()
    const conversation = await client.createConversation(key)
    for (let i = 0; i < 3; i++) await client.text(key, conversation.id, `warm ${i}`)
    return { bot, client, key, conversation }
  }

  it('a deleted user\'s key is refused (401) by the next request, with its lookup cached', async () => {
    const { key } = await chat.createUser()
    const other = await chat.createUser()
    const conversation = await chat.createConversation(key)
    await chat.text(key, conversation.id, 'warm')
    expect((await chat.request('DELETE', '/users/me', { key, body: {} })).status).toBe(200)
    expectApiError(await chat.request('POST', '/messages', { key, body: { conversationId: conversation.id, payload: { type: 'text', text: 'x' } } }), 401, 'Unauthorized')
    expectApiError(await chat.request('GET', '/users/me', { key }), 401, 'Unauthorized')
    // other users' cached keys are unaffected
    expect((await chat.request('GET', '/users/me', { key: other.key })).status).toBe(200)
  })

  it('an updated user is seen by the next request (no stale cached row)', async () => {
    const { key } = await chat.createUser({ name: 'Before' })
    expect((await chat.request<{ user: UserView }>('GET', '/users/me', { key })).body.user.name).toBe('Before')
    expect((await chat.request('PUT', '/users/me', { key, body: { name: 'After' } })).status).toBe(200)
    expect((await chat.request<{ user: UserView }>('GET', '/users/me', { key })).body.user.name).toBe('After')
    const conversation = await chat.createConversation(key)
    const message = await chat.text(key, conversation.id, 'hi')
    expect(message.userId).toBeDefined()
  })

  it('a disabled chat integration answers 404 at once, and works again when re-enabled', async () => {
    const { bot, client, key, conversation } = await warmBot()
    await admin('PUT', `/bots/${bot.id}`, { integrations: { chat: { enabled: false } } })
    expectApiError(await client.request('POST', '/messages', { key, body: { conversationId: conversation.id, payload: { type: 'text', text: 'x' } } }), 404, 'ResourceNotFound')
    expectApiError(await client.request('GET', '/users/me', { key }), 404, 'ResourceNotFound')
    await admin('PUT', `/bots/${bot.id}`, { integrations: { chat: { enabled: true } } })
    expect((await client.text(key, conversation.id, 'back')).conversationId).toBe(conversation.id)
  })

  it('a deleted bot\'s webhook answers 404 at once, its keys are gone with it', async () => {
    const { bot, client, key, conversation } = await warmBot()
    await admin('DELETE', `/bots/${bot.id}`)
    expectApiError(await client.request('POST', '/messages', { key, body: { conversationId: conversation.id, payload: { type: 'text', text: 'x' } } }), 404, 'ResourceNotFound')
    expectApiError(await client.request('GET', '/users/me', { key }), 404, 'ResourceNotFound')
    expectApiError(await client.request('GET', '/hello/'), 404, 'ResourceNotFound')
  })

  it('a participant removed from a conversation is refused (403) by the next message', async () => {
    const owner = await chat.createUser()
    const guest = await chat.createUser()
    const conversation = await chat.createConversation(owner.key)
    await chat.addParticipant(owner.key, conversation.id, guest.user.id)
    await chat.text(guest.key, conversation.id, 'in')
    expect((await chat.request('DELETE', `/conversations/${conversation.id}/participants/${guest.user.id}`, { key: owner.key, body: {} })).status).toBe(200)
    expectApiError(await chat.request('POST', '/messages', { key: guest.key, body: { conversationId: conversation.id, payload: { type: 'text', text: 'x' } } }), 403, 'Forbidden')
    expectApiError(await chat.request('POST', '/events', { key: guest.key, body: { conversationId: conversation.id, payload: {} } }), 403, 'Forbidden')
    expectApiError(await chat.request('POST', '/messages', { key: guest.key, body: { conversationId: 'no-such-conversation', payload: { type: 'text', text: 'x' } } }), 404, 'ResourceNotFound')
  })

  it('user keys are looked up once, not on every request', async () => {
    const { key } = await chat.createUser()
    const conversation = await chat.createConversation(key)
    const lookups = vi.spyOn(h.store, 'findUserByKeyHash')
    try {
      for (let i = 0; i < 5; i++) await chat.text(key, conversation.id, `m${i}`)
      expect(lookups).toHaveBeenCalledTimes(0)
    } finally {
      lookups.mockRestore()
    }
  })

  it.skipIf(testStoreKind() !== 'postgres')('PostgreSQL, two instances: a user updated or deleted through one is seen by the other at once, its key cached there', async () => {
    // A second instance on the same database, with its own store, pub/sub and caches.
    const adapters = await createAdapters({ ...h.config, databasePoolSize: 3 })
    const { store } = adapters
    const app = await buildApp({ config: h.config, ...adapters, logger: false })
    try {
      await app.ready()
      const other = new ChatClient(app, h.credentials.chat.webhookId, h.credentials.chat.encryptionKey)
      const { key } = await chat.createUser({ name: 'Before' })
      const conversation = await chat.createConversation(key)
      // warm on the other instance: the key's user is cached there, and no longer looked up
      expect((await other.request<{ user: UserView }>('GET', '/users/me', { key })).body.user.name).toBe('Before')
      await other.text(key, conversation.id, 'warm')
      const lookups = vi.spyOn(store, 'findUserByKeyHash')
      await other.text(key, conversation.id, 'cached')
      expect(lookups).toHaveBeenCalledTimes(0)
      lookups.mockRestore()

      // Well within the cache's TTL (5 s): only the notification can have dropped the entry.
      const within = async (check: () => Promise<boolean>) => {
        const deadline = Date.now() + 2_000
        while (!(await check())) {
          if (Date.now() > deadline) throw new Error('the other instance still answers from its stale cache entry')
          await new Promise((r) => setTimeout(r, 10))
        }
      }
      expect((await chat.request('PUT', '/users/me', { key, body: { name: 'After' } })).status).toBe(200)
      await within(async () => (await other.request<{ user: UserView }>('GET', '/users/me', { key })).body.user?.name === 'After')

      expect((await chat.request('DELETE', '/users/me', { key, body: {} })).status).toBe(200)
      await within(async () => (await other.request('GET', '/users/me', { key })).status === 401)
      expectApiError(await other.request('POST', '/messages', { key, body: { conversationId: conversation.id, payload: { type: 'text', text: 'x' } } }), 401, 'Unauthorized')
    } finally {
      await app.close()
      await closeAdapters(adapters)
    }
  })
})
