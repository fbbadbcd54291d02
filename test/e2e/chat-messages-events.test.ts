/**
 * Chat API messages and events, driven by the official @botpress/chat client over real HTTP:
 * createMessage (all 11 payload types + bloc, with metadata), getMessage, deleteMessage,
 * listMessages (paging), createEvent, getEvent. The same object must come back from create, get,
 * list and the stream.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { CHAT_PAGE_SIZE } from '../../src/domain/chat-service.js'
import { asSignal, listenRaw, type SseStream } from './sse-reader.js'
import { closeListener, connectJwt, expectErrorBody, expectIsoZ, raw, record, until, withoutIsBot } from './helpers.js'

type Payload = chat.AuthenticatedClientRequests['createMessage']['payload']
type Message = chat.Message

const card = {
  type: 'card' as const,
  title: 'A card',
  subtitle: 'with a subtitle',
  imageUrl: 'https://example.com/card.png',
  actions: [
    { action: 'postback' as const, label: 'Post back', value: 'pb' },
    { action: 'url' as const, label: 'Open', value: 'https://example.com' },
    { action: 'say' as const, label: 'Say', value: 'hi' },
  ],
}

/** The 11 payload types of the Chat API, plus bloc (wire-compat §1.5). */
const PAYLOADS: Payload[] = [
  { type: 'text', text: 'hello world' },
  { type: 'markdown', markdown: '# Title\n\n**bold** _it_' },
  { type: 'image', imageUrl: 'https://example.com/image.png' },
  { type: 'audio', audioUrl: 'https://example.com/audio.mp3' },
  { type: 'video', videoUrl: 'https://example.com/video.mp4' },
  { type: 'file', fileUrl: 'https://example.com/doc.pdf', title: 'The doc' },
  { type: 'location', latitude: 45.5017, longitude: -73.5673, address: '1 Rue Main', title: 'Office' },
  card,
  { type: 'carousel', items: [card, { type: 'card', title: 'Second', actions: [] }] },
  { type: 'choice', text: 'Pick one', options: [{ label: 'Red', value: 'red' }, { label: 'Blue', value: 'blue' }] },
  { type: 'dropdown', text: 'Select', options: [{ label: 'One', value: '1' }, { label: 'Two', value: '2' }] },
  {
    type: 'bloc',
    items: [
      { type: 'text', text: 'hello' },
      { type: 'markdown', markdown: '*md*' },
      { type: 'image', imageUrl: 'https://example.com/i.png' },
      { type: 'audio', audioUrl: 'https://example.com/a.mp3' },
      { type: 'video', videoUrl: 'https://example.com/v.mp4' },
      { type: 'file', fileUrl: 'https://example.com/f.txt', title: 'f' },
      { type: 'location', latitude: 1.5, longitude: 2.25 },
    ],
  },
]

describe('e2e: chat messages and events (official client)', () => {
  let h: Harness
  let apiUrl: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    apiUrl = h.credentials.chat.url
  })
  afterAll(async () => h?.close())

  it('covers all 11 payload types plus bloc', () => {
    expect(new Set(PAYLOADS.map((p) => p.type))).toEqual(
      new Set(['text', 'markdown', 'image', 'audio', 'video', 'file', 'location', 'card', 'carousel', 'choice', 'dropdown', 'bloc']),
    )
  })

  it('createMessage returns 201 { message } with metadata beside (not inside) the payload', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const metadata = { foo: 'bar', n: 1, nested: { ok: true } }
    const res = await raw(apiUrl, 'POST', '/messages', {
      key: alice.user.key,
      body: { conversationId: conversation.id, payload: { type: 'text', text: 'raw' }, metadata },
    })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body)).toEqual(['message'])
    const message = res.body.message
    expect(Object.keys(message).sort()).toEqual(['conversationId', 'createdAt', 'id', 'metadata', 'payload', 'userId'])
    expect(message).toMatchObject({ conversationId: conversation.id, userId: alice.user.id, payload: { type: 'text', text: 'raw' }, metadata })
    expect(message.payload).not.toHaveProperty('metadata')
    expectIsoZ(message.createdAt)

    const got = await raw(apiUrl, 'GET', `/messages/${message.id}`, { key: alice.user.key })
    expect(got.status).toBe(200)
    expect(got.body).toEqual({ message })

    // Without metadata, the field is absent (not null).
    const { message: plain } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'plain' } })
    expect(plain).not.toHaveProperty('metadata')
  })

  it('every payload type round-trips identically through createMessage, getMessage, listMessages and both streams', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const listener = await alice.listenConversation({ id: conversation.id })
    const streamed = record(listener, 'message_created')
    let rawStream: SseStream | undefined
    try {
      rawStream = await listenRaw(apiUrl, conversation.id, alice.user.key)
      expect(rawStream.status).toBe(200)

      const sent: Message[] = []
      for (const [index, payload] of PAYLOADS.entries()) {
        const metadata = { index, kind: payload.type, tags: ['e2e'] }
        const { message } = await alice.createMessage({ conversationId: conversation.id, payload, metadata })
        expect(message.payload).toEqual(payload)
        expect(message.metadata).toEqual(metadata)
        expect(message.payload).not.toHaveProperty('metadata')
        expect(message).toMatchObject({ conversationId: conversation.id, userId: alice.user.id })
        expectIsoZ(message.createdAt)
        sent.push(message)
      }

      // createdAt strictly increasing in creation order.
      for (let i = 1; i < sent.length; i++) expect(Date.parse(sent[i]!.createdAt)).toBeGreaterThan(Date.parse(sent[i - 1]!.createdAt))

      // getMessage returns the created object.
      for (const message of sent) expect((await alice.getMessage({ id: message.id })).message).toEqual(message)

      // listMessages (newest first) returns the same objects.
      const { messages, meta } = await alice.listMessages({ conversationId: conversation.id })
      expect(meta.nextToken).toBeFalsy()
      expect(messages).toEqual([...sent].reverse())

      // The official listener parsed every signal (no 'unknown'), with isBot false, and data minus isBot == getMessage.
      await until(() => streamed.length >= sent.length, `${sent.length} message_created signals on the official listener`)
      expect(streamed.map((s) => s.isBot)).toEqual(sent.map(() => false))
      expect(streamed.map(withoutIsBot)).toEqual(sent)

      // The raw frames carry exactly the same object (nothing extra that zod would strip), in order.
      await rawStream.waitUntil(() => rawStream!.allSignals().length >= sent.length)
      const frames = rawStream.allSignals()
      expect(frames.map((f) => f.type)).toEqual(sent.map(() => 'message_created'))
      expect(frames.map((f) => f.data)).toEqual(sent.map((m) => ({ ...m, isBot: false })))
    } finally {
      await rawStream?.close()
      await closeListener(listener)
    }
  })

  it('listMessages pages through more than one page with meta.nextToken (newest first); client.list.messages collects all', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const total = CHAT_PAGE_SIZE + 5
    const sent: Message[] = []
    for (let i = 0; i < total; i++) {
      const author = i % 2 === 0 ? alice : bob
      sent.push((await author.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: `m${i}` } })).message)
    }

    const first = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/messages`, { key: bob.user.key })
    expect(first.status).toBe(200)
    expect(first.body.messages).toHaveLength(CHAT_PAGE_SIZE)
    expect(typeof first.body.meta.nextToken).toBe('string')
    const second = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/messages?nextToken=${encodeURIComponent(first.body.meta.nextToken)}`, { key: bob.user.key })
    expect(second.status).toBe(200)
    expect(second.body.messages).toHaveLength(5)
    expect(second.body.meta.nextToken).toBeUndefined()
    expect([...first.body.messages, ...second.body.messages]).toEqual([...sent].reverse())

    const pages: Message[][] = []
    let nextToken: string | undefined
    do {
      const page = await alice.listMessages({ conversationId: conversation.id, ...(nextToken !== undefined && { nextToken }) })
      pages.push(page.messages)
      nextToken = page.meta.nextToken
    } while (nextToken)
    expect(pages.map((p) => p.length)).toEqual([CHAT_PAGE_SIZE, 5])
    expect(pages.flat()).toEqual([...sent].reverse())

    const collected = await alice.list.messages({ conversationId: conversation.id }).collect()
    expect(collected).toEqual([...sent].reverse())
    // createdAt strictly increasing, ISO Z everywhere.
    for (const m of sent) expectIsoZ(m.createdAt)
    for (let i = 1; i < sent.length; i++) expect(Date.parse(sent[i]!.createdAt)).toBeGreaterThan(Date.parse(sent[i - 1]!.createdAt))
  })

  it('deleteMessage (DELETE, body {}) returns 200 {}; the message is 404 and gone from listMessages', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const { message: keep } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'keep' } })
    const { message: drop } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'drop' } })

    const res = await raw(apiUrl, 'DELETE', `/messages/${drop.id}`, { key: alice.user.key, body: {} })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    await expect(alice.getMessage({ id: drop.id })).rejects.toThrow(chat.ResourceNotFoundError)
    expect((await alice.listMessages({ conversationId: conversation.id })).messages).toEqual([keep])

    await expect(alice.deleteMessage({ id: keep.id })).resolves.toEqual({})
    await expect(alice.deleteMessage({ id: keep.id })).rejects.toThrow(chat.ResourceNotFoundError)
    expect((await alice.listMessages({ conversationId: conversation.id })).messages).toEqual([])
  })

  it('createEvent returns 201 { event }; getEvent (200) returns the same object', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const payload = { kind: 'typing', nested: { list: [1, 'two', { three: 3 }], flag: false }, nothing: null }
    const res = await raw(apiUrl, 'POST', '/events', { key: alice.user.key, body: { conversationId: conversation.id, payload } })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body)).toEqual(['event'])
    const event = res.body.event
    expect(Object.keys(event).sort()).toEqual(['conversationId', 'createdAt', 'id', 'payload', 'userId'])
    expect(event).toMatchObject({ conversationId: conversation.id, userId: alice.user.id, payload })
    expectIsoZ(event.createdAt)

    const got = await raw(apiUrl, 'GET', `/events/${event.id}`, { key: alice.user.key })
    expect(got.status).toBe(200)
    expect(got.body).toEqual({ event })

    const viaClient = await alice.createEvent({ conversationId: conversation.id, payload: { ping: 'pong' } })
    expect((await alice.getEvent({ id: viaClient.event.id })).event).toEqual(viaClient.event)
    expect(Date.parse(viaClient.event.createdAt)).toBeGreaterThan(Date.parse(event.createdAt))
  })

  it('messages and events share one strictly increasing createdAt clock per conversation', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const stamps: string[] = []
    for (let i = 0; i < 10; i++) {
      if (i % 2 === 0) stamps.push((await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: `${i}` } })).message.createdAt)
      else stamps.push((await alice.createEvent({ conversationId: conversation.id, payload: { i } })).event.createdAt)
    }
    // Also under concurrency: 20 messages at once still get distinct, increasing stamps by creation order.
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: `b${i}` } })),
    )
    for (const s of stamps) expectIsoZ(s)
    for (let i = 1; i < stamps.length; i++) expect(Date.parse(stamps[i]!)).toBeGreaterThan(Date.parse(stamps[i - 1]!))
    const burstStamps = burst.map((b) => Date.parse(b.message.createdAt))
    expect(new Set(burstStamps).size).toBe(burst.length)
    const listed = await alice.list.messages({ conversationId: conversation.id }).collect()
    const times = listed.map((m) => Date.parse(m.createdAt)).reverse()
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!)
  })

  it('a raw stream frame for a message is parseable by the client schema rules: unnamed data frame, ISO Z createdAt', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const stream = await listenRaw(apiUrl, conversation.id, alice.user.key)
    try {
      const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'x' }, metadata: { a: 1 } })
      const signal = await stream.nextSignal()
      const frame = stream.frames.find((f) => asSignal(f)?.type === 'message_created')!
      expect(frame.event).toBeUndefined()
      expect(frame.lines.some((l) => l.startsWith('event:'))).toBe(false)
      expect(signal).toMatchObject({ type: 'message_created', data: { ...message, isBot: false } })
      expectIsoZ(signal.data.createdAt)
    } finally {
      await stream.close()
    }
  })

  it('refuses a message into an unknown conversation (404) and an invalid payload (400)', async () => {
    const alice = await connectJwt(h)
    await expect(alice.createMessage({ conversationId: 'no-such-conversation', payload: { type: 'text', text: 'x' } })).rejects.toThrow(
      chat.ResourceNotFoundError,
    )
    const { conversation } = await alice.createConversation({})
    const bad = await raw(apiUrl, 'POST', '/messages', { key: alice.user.key, body: { conversationId: conversation.id, payload: { type: 'text', text: '' } } })
    expectErrorBody(bad, 400, 'InvalidPayload')
    const unknownType = await raw(apiUrl, 'POST', '/messages', { key: alice.user.key, body: { conversationId: conversation.id, payload: { type: 'hologram' } } })
    expectErrorBody(unknownType, 400, 'InvalidPayload')
  })
})
