/**
 * Message shapes (docs/runtime-api.md, "Message shapes"; src/domain/message-shapes.ts), as Botpress's chat integration
 * maps them: on the Runtime API side a bloc's items are { type, payload } and the metadata is inside the payload; on
 * the Chat API side a bloc's items are flat and the metadata is beside the payload. Driven by the official
 * @botpress/client (a bot API key) and @botpress/chat (an end user), an unchanged @botpress/sdk bot in a child process
 * (test/fixtures/sdk-bots/shapes-bot.mjs), a sandboxed bot module; and the message types a channel declares
 * (an unchanged @botpress/sdk integration's, the built-in chat's) holding createMessage to them.
 */
import * as chat from '@botpress/chat'
import type { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { deploySdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { hostSdkIntegration, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { allLogs, createBot, STREAM_CONFIG, Talk, uid, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 20_000, attempts: 3, backoffMs: 50, maxBackoffMs: 200 }

/** One bloc of every item type, in both shapes. */
const ITEMS = [
  { type: 'text', fields: { text: 'Hello' } },
  { type: 'markdown', fields: { markdown: '**bold**' } },
  { type: 'image', fields: { imageUrl: 'https://example.test/a.png' } },
  { type: 'audio', fields: { audioUrl: 'https://example.test/a.mp3' } },
  { type: 'video', fields: { videoUrl: 'https://example.test/a.mp4' } },
  { type: 'file', fields: { fileUrl: 'https://example.test/a.pdf', title: 'A' } },
  { type: 'location', fields: { latitude: 48.85, longitude: 2.35, address: 'Paris' } },
]
const runtimeItems = ITEMS.map((i) => ({ type: i.type, payload: i.fields }))
const chatItems = ITEMS.map((i) => ({ type: i.type, ...i.fields }))

describe('message shapes: Runtime API ↔ Chat API', () => {
  let h: Harness
  let bot: TestBot
  let client: Client
  const programs: SdkBot[] = []

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    bot = await createBot(h)
    client = await runtimeClient(h, bot.id)
  })
  afterAll(async () => {
    await Promise.all(programs.map((p) => p.stop()))
    await h?.close()
  })

  it('a bot\'s runtime bloc ({ type, payload } items) and payload.metadata reach @botpress/chat flat, with metadata beside the payload', async () => {
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      const { message } = await client.createMessage({
        conversationId: talk.conversationId, userId: bot.id, tags: {}, type: 'bloc',
        payload: { items: runtimeItems, metadata: { source: 'runtime', n: 1 } } as never,
      })
      // The Runtime API answers in its own shape…
      expect(message).toMatchObject({ type: 'bloc', payload: { items: runtimeItems, metadata: { source: 'runtime', n: 1 } } })
      expect((await client.getMessage({ id: message.id })).message.payload).toEqual({ items: runtimeItems, metadata: { source: 'runtime', n: 1 } })
      // …the end user gets the Chat API's, on the stream and in the list.
      const [signal] = await talk.botCount(1)
      expect(talk.unknown).toEqual([])
      expect(signal!.payload).toEqual({ type: 'bloc', items: chatItems })
      expect(signal!.metadata).toEqual({ source: 'runtime', n: 1 })
      const { message: read } = await talk.user.getMessage({ id: message.id })
      expect(read.payload).toEqual({ type: 'bloc', items: chatItems })
      expect(read.metadata).toEqual({ source: 'runtime', n: 1 })
    } finally {
      await talk.close()
    }
  })

  it('a user\'s chat metadata is inside the runtime payload (getMessage, listMessages); a user\'s bloc reads back as { type, payload } items', async () => {
    const user = await chat.Client.connect({ apiUrl: bot.url })
    const { conversation } = await user.createConversation({})
    const { message: said } = await user.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hi' }, metadata: { ref: 'order-7', nested: { a: [1, 2] } } })
    const { message: bloc } = await user.createMessage({ conversationId: conversation.id, payload: { type: 'bloc', items: chatItems } as never })
    expect((await client.getMessage({ id: said.id })).message).toMatchObject({ type: 'text', payload: { text: 'hi', metadata: { ref: 'order-7', nested: { a: [1, 2] } } } })
    const { messages } = await client.listMessages({ conversationId: conversation.id })
    expect(messages.map((m) => [m.type, m.payload])).toEqual([
      ['bloc', { items: runtimeItems }],
      ['text', { text: 'hi', metadata: { ref: 'order-7', nested: { a: [1, 2] } } }],
    ])
    expect(messages[0]!.id).toBe(bloc.id)
  })

  it('flat bloc items (what Parley took before) are still accepted on the runtime side; updateMessage with payload.metadata replaces it, without keeps it', async () => {
    const { conversation } = await client.createConversation({ channel: 'channel', tags: {} })
    const { message } = await client.createMessage({ conversationId: conversation.id, userId: bot.id, tags: {}, type: 'bloc', payload: { items: chatItems, metadata: { v: 1 } } as never })
    expect(message.payload).toEqual({ items: runtimeItems, metadata: { v: 1 } })
    const kept = await client.updateMessage({ id: message.id, tags: {}, payload: { items: [{ type: 'text', payload: { text: 'changed' } }] } })
    expect(kept.message.payload).toEqual({ items: [{ type: 'text', payload: { text: 'changed' } }], metadata: { v: 1 } })
    const replaced = await client.updateMessage({ id: message.id, tags: {}, payload: { items: [{ type: 'text', text: 'again' }], metadata: { v: 2 } } })
    expect(replaced.message.payload).toEqual({ items: [{ type: 'text', payload: { text: 'again' } }], metadata: { v: 2 } })
  })

  it('malformed runtime shapes are a 400 that says where: metadata not an object, an item payload not an object or with fields beside it, an item payload missing a field', async () => {
    const { conversation } = await client.createConversation({ channel: 'channel', tags: {} })
    const create = (type: string, payload: unknown) => failure(client.createMessage({ conversationId: conversation.id, userId: bot.id, tags: {}, type, payload: payload as never }))
    expect(await create('text', { text: 'x', metadata: 'no' })).toEqual({ code: 400, type: 'InvalidPayload', message: 'payload/metadata must be an object' })
    expect(await create('bloc', { items: [{ type: 'text', payload: 'x' }] })).toMatchObject({ code: 400, message: 'payload/items/0/payload must be an object' })
    expect(await create('bloc', { items: [{ type: 'text', payload: { text: 'x' }, text: 'y' }] })).toMatchObject({ code: 400, message: expect.stringMatching(/^payload\/items\/0 must be \{ type, payload \}.*: text$/) })
    expect(await create('bloc', { items: [{ type: 'image', payload: { text: 'x' } }] })).toMatchObject({ code: 400, message: expect.stringMatching(/^payload\/items\/0 /) })
    expect((await client.listMessages({ conversationId: conversation.id })).messages).toEqual([])
  })

  it('an unchanged @botpress/sdk bot answers a bloc of { type, payload } items and echoes the user\'s metadata (both reach @botpress/chat in its shape)', async () => {
    const { bot: sdkBot, program } = await deploySdkBot(h, 'shapes-bot.mjs')
    programs.push(program)
    const talk = await Talk.open(sdkBot, { userId: uid('user') })
    const fail = async (err: Error) => {
      throw new Error(`${err.message}\nbot program: ${program.output()}\nbot logs: ${JSON.stringify((await allLogs(h, sdkBot.id)).logs)}`)
    }
    try {
      const [blocReply] = await talk.ask('bloc').catch(fail)
      expect(blocReply!.payload).toEqual({
        type: 'bloc',
        items: [
          { type: 'text', text: 'Here is everything' },
          { type: 'image', imageUrl: 'https://example.test/steak.jpg' },
          { type: 'audio', audioUrl: 'https://example.test/liszt.mp3' },
          { type: 'file', fileUrl: 'https://example.test/cities.csv', title: 'Cities' },
          { type: 'location', latitude: 40.748817, longitude: -73.985428, title: 'Empire State' },
        ],
      })
      await talk.user.createMessage({ conversationId: talk.conversationId, payload: { type: 'text', text: 'metadata' }, metadata: { from: 'chat', ids: [1, 2] } })
      const [, metadataReply] = await talk.botCount(2).catch(fail)
      expect(metadataReply!.payload).toEqual({ type: 'text', text: 'metadata' })
      expect(metadataReply!.metadata).toEqual({ from: 'chat', ids: [1, 2] })
      // The message_created event the bot got: the runtime payload, metadata inside, no `type` in it.
      await talk.user.createMessage({ conversationId: talk.conversationId, payload: { type: 'text', text: 'show' }, metadata: { k: 'v' } })
      const [, , shown] = await talk.botCount(3).catch(fail)
      expect(JSON.parse(String((shown!.payload as { text: string }).text))).toEqual({ type: 'text', payload: { text: 'show', metadata: { k: 'v' } } })
      expect(talk.unknown).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('a sandboxed bot module sees the user\'s metadata as event.metadata (the payload keeps the Chat API\'s shape there) and replies with metadata', async () => {
    const code = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ payload: { type: 'text', text: JSON.stringify({ payload: event.payload, metadata: event.metadata ?? null }) }, metadata: { echoed: event.metadata ?? null } })
  },
}
`
    const sandboxed = await createBot(h, code)
    const talk = await Talk.open(sandboxed, { userId: uid('user') })
    try {
      await talk.user.createMessage({ conversationId: talk.conversationId, payload: { type: 'text', text: 'hey' }, metadata: { lang: 'fr' } })
      const [reply] = await talk.botCount(1)
      expect(JSON.parse((reply!.payload as { text: string }).text)).toEqual({ payload: { type: 'text', text: 'hey' }, metadata: { lang: 'fr' } })
      expect(reply!.metadata).toEqual({ echoed: { lang: 'fr' } })
      // The Runtime API shows that reply with its metadata inside the payload.
      const runtime = await runtimeClient(h, sandboxed.id)
      expect((await runtime.getMessage({ id: reply!.id })).message.payload).toMatchObject({ metadata: { echoed: { lang: 'fr' } } })
    } finally {
      await talk.close()
    }
  })

  it('the built-in chat refuses a type it does not declare, with the types it declares', async () => {
    const { conversation } = await client.createConversation({ channel: 'channel', tags: {} })
    for (const create of [client.createMessage.bind(client), client.getOrCreateMessage.bind(client)]) {
      const err = await failure(create({ conversationId: conversation.id, userId: bot.id, tags: {}, type: 'sticker', payload: { stickerId: 'x' } } as never))
      expect(err).toEqual({ code: 400, type: 'InvalidPayload', message: 'payload/type must be one of: audio, card, carousel, choice, dropdown, file, image, location, markdown, text, video, bloc; got "sticker"' })
    }
  })
})

describe('message types an @botpress/sdk integration\'s channel declares', () => {
  let h: Harness
  let outside: OutsideChat
  let program: SdkBot | undefined

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    outside = await startOutsideChat()
  })
  afterAll(async () => {
    await program?.stop()
    await outside?.close()
    await h?.close()
  })

  it('createMessage and getOrCreateMessage of a type the channel does not declare are refused 400 with the declared types; nothing is stored or sent', async () => {
    // outside-chat's channel `channel` declares `text` only.
    const hosted = await hostSdkIntegration(h, {
      definition, script: '../sdk-integrations/outside-chat.mjs', alias: 'outside', code: 'export const hooks = {}',
      installation: { configuration: { serviceUrl: outside.url, verifyToken: 'let-me-in' } },
    })
    program = hosted.program
    const client = await runtimeClient(h, hosted.bot.id)
    const { conversation } = await client.createConversation({ channel: 'channel', integrationName: 'outside', tags: { id: 'chat-1' } })
    const declared = 'type must be one of the message types channel "channel" of integration "outside" declares: text; got "image"'
    const image = { conversationId: conversation.id, userId: hosted.bot.id, tags: {}, type: 'image', payload: { imageUrl: 'https://example.test/a.png' } }
    expect(await failure(client.createMessage(image))).toEqual({ code: 400, type: 'InvalidPayload', message: declared })
    expect(await failure(client.getOrCreateMessage({ ...image, tags: { ref: 'r1' } }))).toEqual({ code: 400, type: 'InvalidPayload', message: declared })
    // A user's message of an undeclared type (the integration posting it) is refused the same way.
    const { user } = await client.createUser({ integrationName: 'outside', tags: { id: 'u-1' } })
    expect(await failure(client.createMessage({ ...image, userId: user.id }))).toEqual({ code: 400, type: 'InvalidPayload', message: declared })
    expect((await client.listMessages({ conversationId: conversation.id })).messages).toEqual([])
    // A declared type goes through, and out to the integration.
    await client.createMessage({ ...image, type: 'text', payload: { text: 'declared' } })
    await outside.waitFor(() => outside.sent.find((s) => s.text === 'declared'), 'the text message')
    expect(outside.sent.map((s) => s.text)).toEqual(['declared'])
  })
})
