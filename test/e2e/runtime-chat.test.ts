/**
 * Runtime API (conversations, participants, messages, users, tag values) driven by the official
 * @botpress/client@1.45.0 over real HTTP with a bot API key, next to end users on the Chat API
 * (@botpress/chat): same rows, the bot's messages on the users' stream, users' messages in the
 * bot's lists, tags, getOrCreate under concurrency, and a transcript export page by page.
 */
import { Client, InvalidPayloadError, ResourceNotFoundError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { closeListener, connectJwt, expectIsoZ, nextSignal, uid } from './helpers.js'

describe('e2e: Runtime API chat data (official client)', () => {
  let h: Harness
  let bot: Client
  let botId: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    botId = h.credentials.botId
    bot = await runtimeClient(h)
  })
  afterAll(async () => h?.close())

  it('users: create, get, update (null removes), list with tag filters, getOrCreate, delete', async () => {
    const tag = uid('t')
    const { user } = await bot.createUser({ tags: { run: tag, plan: 'pro' }, name: 'Ada', pictureUrl: 'https://example.test/a.png', attributes: { lang: 'en' } })
    expect(user).toMatchObject({ tags: { run: tag, plan: 'pro' }, name: 'Ada', pictureUrl: 'https://example.test/a.png', attributes: { lang: 'en' } })
    expectIsoZ(user.createdAt)
    expect((await bot.getUser({ id: user.id })).user).toEqual(user)

    const { user: updated } = await bot.updateUser({ id: user.id, tags: { plan: null, tier: 'gold' }, name: null, attributes: { lang: 'fr' } })
    expect(updated.tags).toEqual({ run: tag, tier: 'gold' })
    expect(updated.name).toBeUndefined()
    expect(updated.attributes).toEqual({ lang: 'fr' })

    const { user: other } = await bot.createUser({ tags: { run: tag, tier: 'silver' } })
    expect((await bot.listUsers({ tags: { run: tag } })).users.map((u) => u.id).sort()).toEqual([user.id, other.id].sort())
    expect((await bot.listUsers({ tags: { run: tag, tier: 'gold' } })).users.map((u) => u.id)).toEqual([user.id])
    // The bot's own user is not listed.
    expect((await bot.listUsers({})).users.some((u) => u.id === botId)).toBe(false)
    expect((await bot.getUser({ id: botId })).user.id).toBe(botId)

    const got = await bot.getOrCreateUser({ tags: { run: tag, tier: 'gold' }, discriminateByTags: ['run', 'tier'] })
    expect(got).toMatchObject({ user: { id: user.id }, meta: { created: false } })
    const made = await bot.getOrCreateUser({ tags: { run: tag, tier: 'bronze' } })
    expect(made.meta.created).toBe(true)

    expect(await bot.deleteUser({ id: other.id })).toEqual({})
    await expect(bot.getUser({ id: other.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('conversations: create (no owner, no participants), get, update, list filters, participants, delete', async () => {
    const tag = uid('c')
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: { run: tag, topic: 'billing' } })
    expect(conversation).toMatchObject({ channel: 'channel', integration: 'chat', tags: { run: tag, topic: 'billing' }, messageCount: 0 })
    expect((await bot.getConversation({ id: conversation.id })).conversation).toEqual(conversation)
    expect((await bot.listParticipants({ id: conversation.id })).participants).toEqual([])

    const { conversation: updated } = await bot.updateConversation({ id: conversation.id, tags: { topic: null, status: 'open' } })
    expect(updated.tags).toEqual({ run: tag, status: 'open' })

    const { user } = await bot.createUser({ tags: { run: tag } })
    const { participant } = await bot.addParticipant({ id: conversation.id, userId: user.id })
    expect(participant.id).toBe(user.id)
    expect((await bot.getParticipant({ id: conversation.id, userId: user.id })).participant.id).toBe(user.id)
    expect((await bot.listParticipants({ id: conversation.id })).participants.map((p) => p.id)).toEqual([user.id])

    const { conversation: second } = await bot.createConversation({ channel: 'other', tags: { run: tag } })
    await bot.createMessage({ conversationId: second.id, userId: botId, type: 'text', payload: { text: 'one' }, tags: {} })
    const ids = async (q: Parameters<Client['listConversations']>[0]) => (await bot.listConversations(q)).conversations.map((c) => c.id).sort()
    expect(await ids({ tags: { run: tag } })).toEqual([conversation.id, second.id].sort())
    expect(await ids({ tags: { run: tag }, participantIds: [user.id] })).toEqual([conversation.id])
    expect(await ids({ tags: { run: tag }, channel: 'other' })).toEqual([second.id])
    expect(await ids({ tags: { run: tag }, minMessageCount: 1 })).toEqual([second.id])
    expect(await ids({ tags: { run: tag }, maxMessageCount: 0 })).toEqual([conversation.id])
    expect(await ids({ tags: { run: tag }, afterDate: new Date(Date.now() + 60_000).toISOString() })).toEqual([])
    expect(await ids({ tags: { run: tag }, beforeDate: new Date(Date.now() + 60_000).toISOString(), sortField: 'updatedAt', sortDirection: 'asc' })).toHaveLength(2)
    await expect(bot.listConversations({ integrationName: 'no-such-integration' })).rejects.toBeInstanceOf(ResourceNotFoundError)

    expect(await bot.removeParticipant({ id: conversation.id, userId: user.id })).toEqual({})
    await expect(bot.getParticipant({ id: conversation.id, userId: user.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    expect(await bot.deleteConversation({ id: conversation.id })).toEqual({})
    await expect(bot.getConversation({ id: conversation.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('messages: the bot\'s createMessage reaches the end user\'s stream (isBot true); the user\'s message is listed as incoming', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const listener = await alice.listenConversation({ id: conversation.id })
    try {
      const seen = nextSignal(listener, 'message_created', { filter: (m) => m.isBot })
      const { message } = await bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: { text: 'Hello from the bot' }, tags: { kind: 'greeting' } })
      expect(message).toMatchObject({ type: 'text', payload: { text: 'Hello from the bot' }, direction: 'outgoing', userId: botId, tags: { kind: 'greeting' } })
      const signal = await seen
      expect(signal).toMatchObject({ id: message.id, isBot: true, userId: botId, conversationId: conversation.id, payload: { type: 'text', text: 'Hello from the bot' } })
    } finally {
      await closeListener(listener)
    }
    const { message: fromAlice } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hi bot' } })
    const { messages } = await bot.listMessages({ conversationId: conversation.id })
    expect(messages.map((m) => [m.direction, m.type, m.payload.text])).toEqual([['incoming', 'text', 'hi bot'], ['outgoing', 'text', 'Hello from the bot']])
    expect((await bot.getMessage({ id: fromAlice.id })).message).toMatchObject({ id: fromAlice.id, userId: alice.user.id, direction: 'incoming', tags: {} })
    // The Chat API's owner is the conversation's participant; the Runtime sees it too.
    expect((await bot.listParticipants({ id: conversation.id })).participants.map((p) => p.id)).toEqual([alice.user.id])
  })

  it('messages: incoming through the Runtime API (as a user), update, getOrCreate, delete, list by tag, payload validation', async () => {
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: {} })
    const { user } = await bot.createUser({ tags: {} })
    const { message } = await bot.createMessage({ conversationId: conversation.id, userId: user.id, type: 'choice', payload: { text: 'Pick', options: [{ label: 'A', value: 'a' }] }, tags: { ext: '42' } })
    expect(message).toMatchObject({ direction: 'incoming', type: 'choice', userId: user.id, tags: { ext: '42' } })
    const { message: updated } = await bot.updateMessage({ id: message.id, tags: { ext: null, seen: 'yes' }, payload: { text: 'Pick one', options: [{ label: 'A', value: 'a' }] } })
    expect(updated).toMatchObject({ tags: { seen: 'yes' }, type: 'choice', payload: { text: 'Pick one' } })
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(updated.createdAt))

    const first = await bot.getOrCreateMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: { text: 'once' }, tags: { ref: 'r1' } })
    const again = await bot.getOrCreateMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: { text: 'once' }, tags: { ref: 'r1' } })
    expect(first.meta.created).toBe(true)
    expect(again).toMatchObject({ message: { id: first.message.id }, meta: { created: false } })
    expect((await bot.listMessages({ tags: { ref: 'r1' } })).messages.map((m) => m.id)).toEqual([first.message.id])

    await expect(bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: {}, tags: {} })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'no-such-type', payload: {}, tags: {} })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(bot.createMessage({ conversationId: conversation.id, userId: 'nobody', type: 'text', payload: { text: 'x' }, tags: {} })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: { text: 'x' }, tags: {}, schedule: { delay: 1000 } })).rejects.toBeInstanceOf(InvalidPayloadError)

    expect(await bot.deleteMessage({ id: message.id })).toEqual({})
    await expect(bot.getMessage({ id: message.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    expect((await bot.getConversation({ id: conversation.id })).conversation.messageCount).toBe(1)
  })

  it('an unknown message type is answered 400 with the allowed types and the value sent (not ajv\'s "must be in oneOf")', async () => {
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: {} })
    const refused = await bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'txt', payload: { text: 'x' }, tags: {} }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(InvalidPayloadError)
    const error = refused as InvalidPayloadError
    expect(error.code).toBe(400)
    expect(error.type).toBe('InvalidPayload')
    expect(error.message).toBe('payload/type must be one of: audio, card, carousel, choice, dropdown, file, image, location, markdown, text, video, bloc; got "txt"')
    const item = await bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'bloc', payload: { items: [{ type: 'card', title: 'x' }] }, tags: {} }).catch((e: unknown) => e)
    expect((item as InvalidPayloadError).message).toBe('payload/items/0/type must be one of: text, markdown, image, audio, video, file, location; got "card"')
    // The raw answer keeps the error body's shape.
    const raw = await fetch(`${h.baseUrl}/v1/chat/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': botId },
      body: JSON.stringify({ conversationId: conversation.id, userId: botId, type: 'txt', payload: { text: 'x' }, tags: {} }),
    })
    expect(raw.status).toBe(400)
    const body = (await raw.json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['code', 'id', 'message', 'type'])
    expect(body).toMatchObject({ code: 400, type: 'InvalidPayload', message: expect.stringMatching(/^payload\/type must be one of: audio, .*; got "txt"$/) })
  })

  it('owner-less conversations and the Chat API: a user added by the bot sees it; a Chat API owner cannot be removed', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: { owner: 'none' } })
    expect((await alice.listConversations({})).conversations.some((c) => c.id === conversation.id)).toBe(false)
    await bot.addParticipant({ id: conversation.id, userId: alice.user.id })
    expect((await alice.listConversations({})).conversations.map((c) => c.id)).toContain(conversation.id)
    const listener = await alice.listenConversation({ id: conversation.id })
    try {
      const seen = nextSignal(listener, 'message_created')
      await bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: { text: 'proactive' }, tags: {} })
      expect(await seen).toMatchObject({ isBot: true, payload: { type: 'text', text: 'proactive' } })
    } finally {
      await closeListener(listener)
    }
    const { conversation: owned } = await alice.createConversation({})
    await expect(bot.removeParticipant({ id: owned.id, userId: alice.user.id })).rejects.toBeInstanceOf(InvalidPayloadError)
    // The bot can remove the user from its own owner-less conversation; the user no longer sees it.
    await bot.removeParticipant({ id: conversation.id, userId: alice.user.id })
    expect((await alice.listConversations({})).conversations.some((c) => c.id === conversation.id)).toBe(false)
  })

  it('getOrCreate*: 10 concurrent identical calls create exactly one row', async () => {
    const tag = uid('race')
    const users = await Promise.all(Array.from({ length: 10 }, () => bot.getOrCreateUser({ tags: { race: tag } })))
    expect(new Set(users.map((r) => r.user.id)).size).toBe(1)
    expect(users.filter((r) => r.meta.created)).toHaveLength(1)

    const conversations = await Promise.all(Array.from({ length: 10 }, () => bot.getOrCreateConversation({ channel: 'channel', tags: { race: tag, x: '1' }, discriminateByTags: ['race'] })))
    expect(new Set(conversations.map((r) => r.conversation.id)).size).toBe(1)
    expect(conversations.filter((r) => r.meta.created)).toHaveLength(1)

    const conversationId = conversations[0]!.conversation.id
    const messages = await Promise.all(Array.from({ length: 10 }, () => bot.getOrCreateMessage({ conversationId, userId: botId, type: 'text', payload: { text: 'x' }, tags: { race: tag } })))
    expect(new Set(messages.map((r) => r.message.id)).size).toBe(1)
    expect((await bot.listMessages({ conversationId })).messages).toHaveLength(1)
  })

  it('tag bounds: more than 50 tags, a key over 100 characters, a value over 1,000, a NUL in a key: 400 on create, update and filters', async () => {
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']))
    const cases = [tooMany, { ['k'.repeat(101)]: 'v' }, { k: 'v'.repeat(1001) }, { 'a\u0000b': 'v' }]
    const { user } = await bot.createUser({ tags: {} })
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: {} })
    for (const tags of cases) {
      await expect(bot.createUser({ tags })).rejects.toBeInstanceOf(InvalidPayloadError)
      await expect(bot.updateUser({ id: user.id, tags })).rejects.toBeInstanceOf(InvalidPayloadError)
      await expect(bot.createConversation({ channel: 'channel', tags })).rejects.toBeInstanceOf(InvalidPayloadError)
      await expect(bot.updateConversation({ id: conversation.id, tags })).rejects.toBeInstanceOf(InvalidPayloadError)
      await expect(bot.createMessage({ conversationId: conversation.id, userId: botId, type: 'text', payload: { text: 'x' }, tags })).rejects.toBeInstanceOf(InvalidPayloadError)
    }
    // Exactly at the bounds is fine.
    const atBounds = { ...Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, 'v'])), ['k'.repeat(100)]: 'v'.repeat(1000) }
    expect(Object.keys((await bot.createUser({ tags: atBounds })).user.tags)).toHaveLength(50)
    await expect(bot.listUsers({ tags: { ['k'.repeat(101)]: 'v' } })).rejects.toThrow()
  })

  it('discriminateByTags naming a tag without a value: 400', async () => {
    await expect(bot.getOrCreateUser({ tags: { a: '1' }, discriminateByTags: ['b'] })).rejects.toBeInstanceOf(InvalidPayloadError)
  })

  it('initializeIncomingMessage: user and conversation got-or-created by tags, the user joins, the message is incoming; importMessages dedupes', async () => {
    const tag = uid('ext')
    const input = {
      user: { tags: { extUser: tag }, name: 'From platform', discriminateByTags: ['extUser'] },
      conversation: { channel: 'channel', tags: { extConv: tag }, discriminateByTags: ['extConv'] },
      message: { type: 'text', payload: { text: 'hello from the platform' }, tags: { extMsg: tag }, discriminateByTags: ['extMsg'] },
    }
    const first = await bot.initializeIncomingMessage(input)
    expect(first.user).toMatchObject({ name: 'From platform', tags: { extUser: tag } })
    expect(first.conversation).toMatchObject({ tags: { extConv: tag }, messageCount: 1 })
    expect(first.message).toMatchObject({ direction: 'incoming', userId: first.user.id, conversationId: first.conversation.id, type: 'text' })
    const second = await bot.initializeIncomingMessage(input)
    expect([second.user.id, second.conversation.id, second.message?.id]).toEqual([first.user.id, first.conversation.id, first.message?.id])
    expect((await bot.listParticipants({ id: first.conversation.id })).participants.map((p) => p.id)).toEqual([first.user.id])

    const history = [0, 1, 2].map((i) => ({
      conversationId: first.conversation.id, userId: i % 2 ? botId : first.user.id, type: 'text', payload: { text: `old ${i}` },
      tags: { imported: `${tag}-${i}` }, createdAt: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString(), discriminateByTags: ['imported'],
    }))
    const imported = await bot.importMessages({ messages: history })
    expect(imported.messages.map((m) => [m.direction, m.payload.text])).toEqual([['incoming', 'old 0'], ['outgoing', 'old 1'], ['incoming', 'old 2']])
    const reimported = await bot.importMessages({ messages: history })
    expect(reimported.messages.map((m) => m.id)).toEqual(imported.messages.map((m) => m.id))
    expect((await bot.getConversation({ id: first.conversation.id })).conversation.messageCount).toBe(4)
  })

  it('listTagValues: distinct values of a key over users, conversations or messages, paged', async () => {
    const key = uid('k').replace(/-/g, '_')
    for (const v of ['b', 'a', 'c', 'a']) await bot.createUser({ tags: { [key]: v } })
    await bot.createConversation({ channel: 'channel', tags: { [key]: 'conv' } })
    const page1 = await bot.listTagValues({ key, type: 'user', pageSize: 2 })
    expect(page1.tags).toEqual([{ value: 'a' }, { value: 'b' }])
    const page2 = await bot.listTagValues({ key, type: 'user', pageSize: 2, nextToken: page1.meta.nextToken })
    expect(page2).toEqual({ tags: [{ value: 'c' }], meta: {} })
    expect((await bot.listTagValues({ key, type: 'conversation' })).tags).toEqual([{ value: 'conv' }])
    expect((await bot.listTagValues({ key, type: 'message' })).tags).toEqual([])
  })

  it('transcript export: every message of a conversation, page by page, oldest first once reversed', async () => {
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: {} })
    const { user } = await bot.createUser({ tags: {} })
    for (let i = 0; i < 7; i++) {
      await bot.createMessage({ conversationId: conversation.id, userId: i % 2 ? botId : user.id, type: 'text', payload: { text: `line ${i}` }, tags: {} })
    }
    const lines: string[] = []
    let nextToken: string | undefined
    let pages = 0
    do {
      const page = await bot.listMessages({ conversationId: conversation.id, pageSize: 3, ...(nextToken && { nextToken }) })
      lines.push(...page.messages.map((m) => `${m.direction === 'outgoing' ? 'bot' : m.userId}: ${m.payload.text}`))
      nextToken = page.meta.nextToken
      pages++
    } while (nextToken)
    expect(pages).toBe(3)
    expect(lines.reverse()).toEqual(Array.from({ length: 7 }, (_, i) => `${i % 2 ? 'bot' : user.id}: line ${i}`))
  })
})

describe('e2e: getOrCreate under load with a small database pool', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ listen: true, config: { databasePoolSize: 3 } })
  })
  afterAll(async () => h?.close())

  it('30 concurrent getOrCreateUser calls on distinct tags all complete (lock holders never take the whole pool)', async () => {
    const bot = await runtimeClient(h)
    const tag = uid('pool')
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => bot.getOrCreateUser({ tags: { pool: tag, n: String(i % 15) } })))
    expect(new Set(results.map((r) => r.user.id)).size).toBe(15)
    expect(results.filter((r) => r.meta.created)).toHaveLength(15)
  })
})
