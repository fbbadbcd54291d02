/**
 * Remote bots, the wire: what Parley POSTs to a bot's `url` (the protocol @botpress/sdk's bot server
 * reads), checked by a plain node:http receiver: exact headers, the signature, the body's shape,
 * order within a conversation and parallelism across conversations; and the `url` field itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifySignature } from '../../src/lib/signature.js'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { adminClient, createBot, STREAM_CONFIG, Talk, uid } from './helpers.js'

const FAST = { timeoutMs: 2_000, budgetMs: 10_000, attempts: 3, backoffMs: 20, maxBackoffMs: 100 }

describe('remote bots: the delivery protocol', () => {
  let h: Harness
  let receiver: BotReceiver

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: FAST } })
    receiver = await startBotReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  it('stores url (createBot/updateBot), returns it (getBot, listBots), clears it with null, and refuses what is not an http(s) URL', async () => {
    const admin = adminClient(h)
    const urlOf = (b: object) => (b as { url?: string }).url
    const { bot } = await admin.createBot({ name: uid('url'), url: 'https://bots.example.com/hook' })
    expect(urlOf(bot)).toBe('https://bots.example.com/hook')
    expect(urlOf((await admin.getBot({ id: bot.id })).bot)).toBe('https://bots.example.com/hook')
    const listed = (await admin.listBots({})).bots.find((b) => b.id === bot.id) as { url?: string }
    expect(listed.url).toBe('https://bots.example.com/hook')
    await admin.updateBot({ id: bot.id, url: null })
    expect(urlOf((await admin.getBot({ id: bot.id })).bot)).toBeUndefined()
    for (const [url, reason] of [
      ['ftp://example.com/', /http: or https:/],
      ['javascript:alert(1)', /http: or https:/],
      ['not a url', /valid absolute URL/],
      [`https://example.com/${'a'.repeat(2100)}`, /longer than 2048/],
      ['https://user:pw@example.com/', /credentials/],
    ] as const) {
      const err = await admin.updateBot({ id: bot.id, url }).then(() => undefined, (e: { code?: number; message?: string }) => e)
      expect(err?.code, url).toBe(400)
      expect(err?.message).toMatch(reason)
    }
  })

  it('sends register when the url is set, then each message as event_received with the exact headers, a valid signature and the SDK body', async () => {
    const admin = adminClient(h)
    const bot = await createBot(h)
    await admin.updateBot({ id: bot.id, url: receiver.url })
    const { bot: full } = await admin.getBot({ id: bot.id })
    const secret = full.signingSecret
    expect(secret.length).toBeGreaterThan(10)
    await receiver.until((r) => r.some((q) => q.headers['x-bot-id'] === bot.id && q.headers['x-bp-operation'] === 'register'), 'register')
    const register = receiver.requests.find((q) => q.headers['x-bot-id'] === bot.id && q.headers['x-bp-operation'] === 'register')!
    expect(register.headers['x-bp-type']).toBe('register')
    expect(verifySignature(secret, register.headers['x-parley-signature'] as string, register.raw, 60)).toBe(true)

    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      const sent = await talk.say('hello remote')
      const mine = () => receiver.events().filter((q) => q.headers['x-bot-id'] === bot.id)
      await receiver.until(() => mine().length >= 1, 'the message')
      const [req] = mine()
      expect(req!.headers['content-type']).toBe('application/json')
      expect(req!.headers['x-bot-id']).toBe(bot.id)
      expect(req!.headers['x-bot-user-id']).toBe(bot.id)
      expect(req!.headers['x-bp-operation']).toBe('event_received')
      expect(req!.headers['x-bp-type']).toBe('message_created')
      expect(JSON.parse(Buffer.from(req!.headers['x-bp-configuration'] as string, 'base64').toString('utf8'))).toEqual({})
      expect(req!.headers['x-parley-event-id']).toBe(sent.id)
      const signature = req!.headers['x-parley-signature'] as string
      expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
      expect(verifySignature(secret, signature, req!.raw, 60)).toBe(true)
      expect(verifySignature(secret, signature, req!.raw + ' ', 60)).toBe(false)
      expect(verifySignature('another secret', signature, req!.raw, 60)).toBe(false)

      const { event } = req!.body
      expect(event).toMatchObject({
        id: sent.id, type: 'message_created', conversationId: talk.conversationId, userId: sent.userId, messageId: sent.id, status: 'pending', failureReason: null,
      })
      expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt)
      expect(event.payload.message).toMatchObject({
        id: sent.id, type: 'text', payload: { text: 'hello remote' }, direction: 'incoming', userId: sent.userId, conversationId: talk.conversationId, tags: {},
      })
      expect(event.payload.message.payload.type).toBeUndefined()
      expect(event.payload.user).toMatchObject({ id: sent.userId, tags: {} })
      expect(event.payload.conversation).toMatchObject({ id: talk.conversationId, integration: 'chat', tags: {} })

      // A custom event of the chat client: `chat:custom`, as Botpress's chat integration emits it.
      const custom = await talk.event({ kind: 'ping', n: 1 })
      await receiver.until(() => mine().length >= 2, 'the custom event')
      const second = mine()[1]!
      expect(second.headers['x-bp-type']).toBe('chat:custom')
      expect(second.body.event).toMatchObject({
        id: custom.id, type: 'chat:custom', conversationId: talk.conversationId, userId: sent.userId,
        payload: { userId: sent.userId, conversationId: talk.conversationId, payload: { kind: 'ping', n: 1 } },
      })
      expect(verifySignature(secret, second.headers['x-parley-signature'] as string, second.raw, 60)).toBe(true)
    } finally {
      await talk.close()
    }
  })

  it('delivers the events of one conversation one at a time in order, and conversations in parallel', async () => {
    const admin = adminClient(h)
    const bot = await createBot(h)
    const ordered = await startBotReceiver()
    // Conversation A's first event is held until conversation B's first event has arrived: only
    // parallel delivery lets this finish. Meanwhile nothing more of A may arrive.
    let releaseA!: () => void
    const heldA = new Promise<void>((resolve) => (releaseA = resolve))
    let firstA: string | undefined
    let inFlight = new Map<string, number>()
    let overlapWithinConversation = false
    ordered.answer = async (req) => {
      if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 }
      const conversation = req.body.event.conversationId as string
      const n = (inFlight.get(conversation) ?? 0) + 1
      inFlight.set(conversation, n)
      if (n > 1) overlapWithinConversation = true
      if (firstA === undefined) firstA = conversation
      if (conversation === firstA && req.body.event.payload.message.payload.text === 'A0') await heldA
      else if (conversation !== firstA) releaseA()
      await new Promise((r) => setTimeout(r, 5))
      inFlight.set(conversation, inFlight.get(conversation)! - 1)
      return { status: 200 }
    }
    try {
      await admin.updateBot({ id: bot.id, url: ordered.url })
      const a = await Talk.open(bot, { userId: uid('a') })
      const b = await Talk.open(bot, { userId: uid('b') })
      try {
        for (let i = 0; i < 5; i++) await a.say(`A${i}`)
        for (let i = 0; i < 5; i++) await b.say(`B${i}`)
        await ordered.until((r) => r.filter((q) => q.headers['x-bp-operation'] === 'event_received').length >= 10, '10 events')
        const texts = (talk: Talk) => ordered.events().filter((q) => q.body.event.conversationId === talk.conversationId).map((q) => q.body.event.payload.message.payload.text)
        expect(texts(a)).toEqual(['A0', 'A1', 'A2', 'A3', 'A4'])
        expect(texts(b)).toEqual(['B0', 'B1', 'B2', 'B3', 'B4'])
        expect(overlapWithinConversation).toBe(false)
        // B's first event arrived while A's first was still unanswered.
        const events = ordered.events()
        expect(events.findIndex((q) => q.body.event.payload.message.payload.text === 'B0')).toBeLessThan(events.findIndex((q) => q.body.event.payload.message.payload.text === 'A1'))
      } finally {
        await a.close()
        await b.close()
      }
    } finally {
      inFlight = new Map()
      await ordered.close()
    }
  })

  it('delivers Runtime API events: bot-level (no conversation) through the runtime\'s bot-level seam, and in a conversation with their own type', async () => {
    const admin = adminClient(h)
    const bot = await createBot(h)
    const events = await startBotReceiver()
    try {
      await admin.updateBot({ id: bot.id, url: events.url })
      const client = await runtimeClient(h, bot.id)
      const { event } = await client.createEvent({ type: 'reminder', payload: { note: 'water the plants' } })
      await events.until(() => events.events().some((q) => q.body.event.id === event.id), 'the bot-level event')
      const req = events.events().find((q) => q.body.event.id === event.id)!
      expect(req.headers['x-bp-type']).toBe('reminder')
      expect(req.body.event).toMatchObject({ id: event.id, type: 'reminder', payload: { note: 'water the plants' } })
      expect(req.body.event.conversationId).toBeUndefined()
      await until(async () => (await client.getEvent({ id: event.id })).event.status === 'processed', 'the event processed')

      const talk = await Talk.open(bot, { userId: uid('user') })
      try {
        const { event: inConversation } = await client.createEvent({ type: 'nudge', conversationId: talk.conversationId, payload: { n: 1 } })
        await events.until(() => events.events().some((q) => q.body.event.id === inConversation.id), 'the conversation event')
        const second = events.events().find((q) => q.body.event.id === inConversation.id)!
        expect(second.headers['x-bp-type']).toBe('nudge')
        expect(second.body.event).toMatchObject({ id: inConversation.id, type: 'nudge', payload: { n: 1 }, conversationId: talk.conversationId })
      } finally {
        await talk.close()
      }
    } finally {
      await events.close()
    }
  })
})

async function until(predicate: () => Promise<boolean>, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
