/**
 * The two timing races of Botpress's own chat-client e2e suite (packages/chat-client/e2e), reproduced with the
 * unchanged @botpress/chat client, and what Parley does so that its side of them is deterministic:
 * - message.test.ts writes a message and only then listens, waiting for its own message_created: a fresh listener
 *   gets the signals of the replay window before it connected (PARLEY_CHAT_LISTEN_REPLAY_MS).
 * - participant.test.ts expects a listener to hold a message once createMessage resolved: the write answers after
 *   this instance's open streams of the conversation have sent its signal.
 * Both count outcomes over many rounds; no timing decides pass or fail.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { listenRaw, type SignalFrame } from './sse-reader.js'
import { closeListener, connectJwt, nextSignal, record } from './helpers.js'

const ROUNDS_CREATE_THEN_LISTEN = 30
const ROUNDS_PARTICIPANT = 20

describe('e2e: chat listen races (Botpress chat-client e2e)', () => {
  let h: Harness
  let apiUrl: string

  beforeAll(async () => {
    // The demo bot answers every message, as bots/echo does in Botpress's run: its late answers are on the streams too.
    h = await startParley({ listen: true, demoBot: true })
    apiUrl = h.credentials.chat.url
  })
  afterAll(async () => h?.close())

  const text = (t: string) => ({ type: 'text' as const, text: t })

  it(`create, then listen: the listener gets its own message every time (${ROUNDS_CREATE_THEN_LISTEN} rounds)`, async () => {
    const client = new chat.Client({ apiUrl })
    const { key } = await client.createUser({})
    let seen = 0
    for (let i = 0; i < ROUNDS_CREATE_THEN_LISTEN; i++) {
      const { conversation } = await client.createConversation({ 'x-user-key': key })
      // As message.test.ts: the create is sent, and only then the listen.
      const created = client.createMessage({ 'x-user-key': key, conversationId: conversation.id, payload: text(`own ${i}`) })
      const listener = await client.listenConversation({ id: conversation.id, 'x-user-key': key })
      const received = record(listener, 'message_created')
      try {
        const { message } = await created
        // A marker written after the listener connected is always delivered: once it is there, so is anything before it.
        const marker = nextSignal(listener, 'message_created', { filter: (m) => m.payload.text === `marker ${i}` })
        await client.createMessage({ 'x-user-key': key, conversationId: conversation.id, payload: text(`marker ${i}`) })
        await marker
        if (received.some((m) => m.id === message.id)) seen++
        // Exactly once: the replayed signal is not sent twice.
        expect(received.filter((m) => m.id === message.id).length).toBeLessThanOrEqual(1)
      } finally {
        await closeListener(listener)
      }
    }
    expect(seen).toBe(ROUNDS_CREATE_THEN_LISTEN)
  })

  it(`a participant's listener holds the message when createMessage resolves (participant.test.ts, ${ROUNDS_PARTICIPANT} rounds)`, async () => {
    const client = new chat.Client({ apiUrl })
    let held = 0
    for (let i = 0; i < ROUNDS_PARTICIPANT; i++) {
      const { key: key1 } = await client.createUser({})
      const { user: user2, key: key2 } = await client.createUser({})
      const { conversation } = await client.createConversation({ 'x-user-key': key1 })
      await client.addParticipant({ 'x-user-key': key1, conversationId: conversation.id, userId: user2.id })
      const listener1 = await client.listenConversation({ id: conversation.id, 'x-user-key': key1 })
      const listener2 = await client.listenConversation({ id: conversation.id, 'x-user-key': key2 })
      const messages1 = record(listener1, 'message_created')
      try {
        const foo = await client.createMessage({ 'x-user-key': key1, conversationId: conversation.id, payload: text('foo') })
        const fooHeld = messages1.some((m) => m.id === foo.message.id)
        await client.removeParticipant({ 'x-user-key': key1, conversationId: conversation.id, userId: user2.id })
        const bar = await client.createMessage({ 'x-user-key': key1, conversationId: conversation.id, payload: text('bar') })
        if (fooHeld && messages1.some((m) => m.id === bar.message.id)) held++
      } finally {
        await closeListener(listener1)
        await closeListener(listener2)
      }
    }
    expect(held).toBe(ROUNDS_PARTICIPANT)
  })

  it('Last-Event-ID stays exact: a resumed stream gets nothing of the replay window before it', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const { message: before } = await alice.createMessage({ conversationId: conversation.id, payload: text('before') })
    const fresh = await listenRaw(apiUrl, conversation.id, alice.user.key)
    let resumed: Awaited<ReturnType<typeof listenRaw>> | undefined
    try {
      // The demo bot's answers land in between: compare the users' messages.
      const own = (frames: SignalFrame[]) => frames.filter((f) => f.type === 'message_created' && f.data.isBot === false)
      await fresh.waitUntil(() => own(fresh.allSignals()).length === 1)
      const beforeFrame = own(fresh.allSignals())[0]!
      expect(beforeFrame.data.id).toBe(before.id)
      resumed = await listenRaw(apiUrl, conversation.id, alice.user.key, { 'Last-Event-ID': beforeFrame.id! })
      const { message: after } = await alice.createMessage({ conversationId: conversation.id, payload: text('after') })
      await resumed.waitUntil(() => own(resumed!.allSignals()).some((f) => f.data.id === after.id))
      expect(own(resumed.allSignals()).map((f) => f.data.id)).toEqual([after.id])
    } finally {
      await fresh.close()
      await resumed?.close()
    }
  })

  it('replay=none (a client that opens the stream, then reads the history: Parley\'s webchat) gets no replay window', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.createMessage({ conversationId: conversation.id, payload: text('before') })
    const windowed = await listenRaw(apiUrl, conversation.id, alice.user.key)
    const plain = await listenRaw(apiUrl, conversation.id, alice.user.key, {}, '?replay=none')
    try {
      const own = (frames: SignalFrame[]) => frames.filter((f) => f.type === 'message_created' && f.data.isBot === false)
      const { message: after } = await alice.createMessage({ conversationId: conversation.id, payload: text('after') })
      // Both streams get the message written after they opened; only the default one also had the one before.
      await windowed.waitUntil(() => own(windowed.allSignals()).some((f) => f.data.id === after.id))
      await plain.waitUntil(() => own(plain.allSignals()).some((f) => f.data.id === after.id))
      expect(own(windowed.allSignals()).map((f) => (f.data.payload as { text?: string }).text)).toEqual(['before', 'after'])
      expect(own(plain.allSignals()).map((f) => f.data.id)).toEqual([after.id])
    } finally {
      await windowed.close()
      await plain.close()
    }
  })
})
