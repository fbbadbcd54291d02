/**
 * The sandboxed bot's client goes through the same domain as the Runtime API: its runtime operations
 * (@botpress/client names and shapes) act on the bot's data and are seen by the Runtime API, its
 * chat-style createMessage still works (with tags), and the objects it reads carry both shapes.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { createBot, jsonAfter, Talk, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.payload.text !== 'go') return
    const r = {}
    const { user } = await client.updateUser({ id: event.userId, tags: { vip: 'yes' }, attributes: { seen: '1' } })
    r.userTags = user.tags
    const { conversation } = await client.updateConversation({ id: event.conversationId, tags: { topic: 'orders' } })
    r.conversation = { tags: conversation.tags, integration: conversation.integration, channel: conversation.channel }
    const again = await client.getOrCreateConversation({ channel: 'channel', tags: { topic: 'orders' }, discriminateByTags: ['topic'] })
    r.sameConversation = again.conversation.id === event.conversationId && again.meta.created === false
    r.participants = (await client.listParticipants({ id: event.conversationId })).participants.map((p) => p.id === event.userId)
    r.usersByTag = (await client.listUsers({ tags: { vip: 'yes' } })).users.length
    r.tagValues = (await client.listTagValues({ key: 'topic', type: 'conversation' })).tags
    const { message } = await client.createMessage({ payload: { type: 'text', text: 'tagged reply' }, tags: { kind: 'reply' } })
    r.reply = { tags: message.tags, direction: message.direction, type: message.type, payloadType: message.payload.type }
    const got = (await client.getMessage({ id: event.messageId })).message
    r.incoming = { direction: got.direction, type: got.type, text: got.payload.text, payloadType: got.payload.type }
    const created = await client.createUser({ tags: { made: 'by-bot' }, name: 'Made' })
    r.created = created.user.name
    await client.createMessage({ payload: { type: 'text', text: 'RESULT ' + JSON.stringify(r) } })
  },
}
`

const ECHO = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: 'echo: ' + event.payload.text } })
  },
}
`

/** Calls the routes refuse, with the arguments @botpress/client takes (flat: path params, query and body keys together). */
const BAD_CALLS: [method: string, args: Record<string, unknown>][] = [
  ['createUser', { tags: 'vip' }],
  ['updateUser', { id: 'u-1', name: 5 }],
  ['getOrCreateConversation', { channel: '', tags: {} }],
  ['listTagValues', { key: 'topic', type: 'bots' }],
  ['listUsers', { pageSize: 0 }],
  ['createTable', { name: '', schema: {} }],
  ['getTableRow', { table: 'Missing', id: 'first' }],
  ['findTableRows', { table: 'Missing', limit: 5000 }],
]

const BAD = String.raw`
const CALLS = ${JSON.stringify(BAD_CALLS)}
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.payload.text !== 'bad') return
    const out = []
    for (const [method, args] of CALLS) {
      try { await client[method](args); out.push('accepted') } catch (err) { out.push(String(err.message || err)) }
    }
    await client.createMessage({ payload: { type: 'text', text: 'RESULT ' + JSON.stringify(out) } })
  },
}
`

describe('runtime: the sandboxed client\'s Runtime API operations', () => {
  let h: Harness
  let bot: TestBot
  let api: Client

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await createBot(h, CODE)
    api = await runtimeClient(h, bot.id)
  })
  afterAll(async () => h?.close())

  it('acts on the bot\'s data through the domain; the Runtime API sees the result', async () => {
    const talk = await Talk.open(bot)
    try {
      const replies = await talk.askText('go', 2, 10_000)
      expect(replies[0]).toBe('tagged reply')
      const r = jsonAfter<Record<string, unknown>>(replies[1]!, 'RESULT ')
      expect(r).toEqual({
        userTags: { vip: 'yes' },
        conversation: { tags: { topic: 'orders' }, integration: 'chat', channel: 'channel' },
        sameConversation: true,
        participants: [true],
        usersByTag: 1,
        tagValues: [{ value: 'orders' }],
        reply: { tags: { kind: 'reply' }, direction: 'outgoing', type: 'text', payloadType: 'text' },
        incoming: { direction: 'incoming', type: 'text', text: 'go', payloadType: 'text' },
        created: 'Made',
      })
      expect((await api.getUser({ id: talk.user.user.id })).user).toMatchObject({ tags: { vip: 'yes' }, attributes: { seen: '1' } })
      const { messages } = await api.listMessages({ conversationId: talk.conversationId, tags: { kind: 'reply' } })
      expect(messages.map((m) => [m.direction, m.payload.text])).toEqual([['outgoing', 'tagged reply']])
    } finally {
      await talk.close()
    }
  })

  it('a user\'s message posted through the Runtime API gives the bot a turn (as a Chat API message does); imported history does not', async () => {
    const echo = await createBot(h, ECHO)
    const echoApi = await runtimeClient(h, echo.id)
    const { conversation } = await echoApi.createConversation({ channel: 'channel', tags: {} })
    const { user } = await echoApi.createUser({ tags: {} })
    await echoApi.importMessages({ messages: [{ conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: 'old' }, tags: { imp: '1' }, createdAt: '2024-01-01T00:00:00.000Z', discriminateByTags: ['imp'] }] })
    await echoApi.createMessage({ conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: 'hello' }, tags: {} })
    await echoApi.initializeIncomingMessage({ userId: user.id, conversationId: conversation.id, message: { type: 'text', payload: { text: 'again' }, tags: { ext: 'm2' }, discriminateByTags: ['ext'] } })
    const texts = async () => (await echoApi.listMessages({ conversationId: conversation.id })).messages.map((m) => `${m.direction} ${m.payload.text}`).reverse()
    // The turns run in order: once the last message is answered, an answer to the imported one would be there too.
    const deadline = Date.now() + 10_000
    while (!(await texts()).includes('outgoing echo: again') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect((await texts()).sort()).toEqual(['incoming old', 'incoming hello', 'outgoing echo: hello', 'incoming again', 'outgoing echo: again'].sort())
  })

  it('bot code\'s calls are validated as the routes validate them: the same error (type and message) as the Runtime and Tables APIs give', async () => {
    const bad = await createBot(h, BAD)
    const badApi = await runtimeClient(h, bad.id) as unknown as Record<string, (args: unknown) => Promise<unknown>>
    const expected: string[] = []
    for (const [method, args] of BAD_CALLS) {
      const err = await failure(badApi[method]!(args))
      expect(err.code, method).toBe(400)
      expected.push(`${err.type}: ${err.message}`)
    }
    const talk = await Talk.open(bad)
    try {
      const replies = await talk.askText('bad', 1, 10_000)
      expect(jsonAfter<string[]>(replies[0]!, 'RESULT ')).toEqual(expected)
    } finally {
      await talk.close()
    }
  })
})
