/**
 * listenConversation (SSE), end to end: the official client's SignalListener and a raw fetch
 * reader side by side. Signals, keep-alives, headers, stream ends (participant removed,
 * conversation deleted), Last-Event-ID replay and refusals.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { asSignal, listenRaw, SseStream, type SignalFrame } from './sse-reader.js'
import {
  closeListener, connectJwt, connectServerKey, expectIsoZ, nextListenerError, nextSignal, raw, record, sleep, until, withoutIsBot,
} from './helpers.js'

const KEEP_ALIVE_MS = 300

const ids = (frames: SignalFrame[]) => frames.map((f) => Number(f.id))
const expectIncreasing = (values: number[]) => {
  for (const v of values) expect(Number.isSafeInteger(v)).toBe(true)
  for (let i = 1; i < values.length; i++) expect(values[i]!).toBeGreaterThan(values[i - 1]!)
}

describe('e2e: chat stream (listenConversation)', () => {
  let h: Harness
  let apiUrl: string

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { sseKeepAliveMs: KEEP_ALIVE_MS } })
    apiUrl = h.credentials.chat.url
  })
  afterAll(async () => h?.close())

  it('sends status 200 and text/event-stream headers at once, before any message exists', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const started = Date.now()
    const stream = await SseStream.open(`${apiUrl}/conversations/${conversation.id}/listen`, {
      headers: { 'x-user-key': alice.user.key },
      timeoutMs: 2000,
    })
    try {
      expect(Date.now() - started).toBeLessThan(KEEP_ALIVE_MS) // not waiting for a first frame
      expect(stream.status).toBe(200)
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream(;.*)?$/)
      expect(stream.response.headers.get('cache-control')).toContain('no-cache')
      expect(stream.allSignals()).toEqual([])
    } finally {
      await stream.close()
    }
    // The official client's listen() resolves on the same empty conversation.
    const listener = await alice.listenConversation({ id: conversation.id })
    expect(listener.status).toBe('connected')
    await closeListener(listener)
  })

  it('delivers the five signals to the official listener (isBot false for users), equal to get*, and the same frames raw, in order', async () => {
    const alice = await connectJwt(h)
    const bob = await connectServerKey(h)
    const { conversation } = await alice.createConversation({})
    const { conversation: elsewhere } = await alice.createConversation({})
    const listener = await alice.listenConversation({ id: conversation.id })
    const unknown = record(listener, 'unknown')
    const rawStream = await listenRaw(apiUrl, conversation.id, alice.user.key)
    const otherStream = await listenRaw(apiUrl, elsewhere.id, alice.user.key)
    try {
      const [added] = await Promise.all([
        nextSignal(listener, 'participant_added'),
        alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id }),
      ])
      expect(added).toEqual({ conversationId: conversation.id, participantId: bob.user.id })

      const [own, { message: ownMessage }] = await Promise.all([
        nextSignal(listener, 'message_created'),
        alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'from alice' }, metadata: { m: 1 } }),
      ])
      expect(own.isBot).toBe(false)
      expect(own.userId).toBe(alice.user.id)
      expect(withoutIsBot(own)).toEqual(ownMessage)
      expect(withoutIsBot(own)).toEqual((await alice.getMessage({ id: own.id })).message)

      const [fromBob, { message: bobMessage }] = await Promise.all([
        nextSignal(listener, 'message_created'),
        bob.createMessage({ conversationId: conversation.id, payload: { type: 'choice', text: 'pick', options: [{ label: 'a', value: 'a' }] } }),
      ])
      expect(fromBob.isBot).toBe(false)
      expect(withoutIsBot(fromBob)).toEqual(bobMessage)
      expect(withoutIsBot(fromBob)).toEqual((await alice.getMessage({ id: bobMessage.id })).message)

      const [eventSignal, { event }] = await Promise.all([
        nextSignal(listener, 'event_created'),
        alice.createEvent({ conversationId: conversation.id, payload: { typing: true } }),
      ])
      expect(eventSignal.isBot).toBe(false)
      expectIsoZ(eventSignal.createdAt)
      expect(withoutIsBot(eventSignal)).toEqual(event)
      expect(withoutIsBot(eventSignal)).toEqual((await alice.getEvent({ id: event.id })).event)

      const [deleted] = await Promise.all([nextSignal(listener, 'message_deleted'), alice.deleteMessage({ id: ownMessage.id })])
      expect(deleted).toEqual({ id: ownMessage.id, conversationId: conversation.id, userId: alice.user.id })

      const [removed] = await Promise.all([
        nextSignal(listener, 'participant_removed'),
        alice.removeParticipant({ conversationId: conversation.id, userId: bob.user.id }),
      ])
      expect(removed).toEqual({ conversationId: conversation.id, participantId: bob.user.id })

      // The raw stream saw exactly these six frames, in order, each with its own increasing numeric id.
      const frames = await rawStream.signals(6)
      expect(frames.map((f) => f.type)).toEqual([
        'participant_added', 'message_created', 'message_created', 'event_created', 'message_deleted', 'participant_removed',
      ])
      expect(frames[1]!.data).toEqual({ ...ownMessage, isBot: false })
      expect(frames[2]!.data).toEqual({ ...bobMessage, isBot: false })
      expect(frames[3]!.data).toEqual({ ...event, isBot: false })
      expectIncreasing(ids(frames))
      // Pings surface as 'unknown' on the official client, never as a real signal type.
      for (const u of unknown) expect(JSON.parse(String(u))).toMatchObject({ type: 'ping' })
      // Nothing leaked into another conversation's stream.
      expect(otherStream.allSignals()).toEqual([])
    } finally {
      await rawStream.close()
      await otherStream.close()
      await closeListener(listener)
    }
  })

  it('sends unnamed {"type":"ping"} data frames as keep-alive, repeatedly, each with an id: line carrying the stream position', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const stream = await listenRaw(apiUrl, conversation.id, alice.user.key)
    const listener = await alice.listenConversation({ id: conversation.id })
    const unknown = record(listener, 'unknown')
    try {
      const pings = () => stream.frames.filter((f) => asSignal(f)?.type === 'ping')
      await stream.waitUntil(() => pings().length >= 3, 10 * KEEP_ALIVE_MS)
      const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'between pings' } })
      const messageFrame = await stream.nextSignal()
      expect(messageFrame.data.id).toBe(message.id)
      const before = pings().length
      await stream.waitUntil(() => pings().length >= before + 2, 10 * KEEP_ALIVE_MS)

      for (const frame of stream.frames) {
        // Every frame carries its own numeric id: line and no event: line (the client only reads unnamed frames).
        expect(frame.lines.filter((l) => l.startsWith('id:'))).toHaveLength(1)
        expect(frame.id).toMatch(/^\d+$/)
        expect(frame.event).toBeUndefined()
      }
      const all = pings()
      for (const ping of all) {
        expect(ping.lines.some((l) => l.startsWith('data: {"type":"ping"'))).toBe(true)
        expect(ping.json).toEqual({ type: 'ping', data: expect.any(Object) })
      }
      // A ping's id is the last signal delivered, so resuming from it loses nothing.
      expect(all.slice(0, before).every((p) => Number(p.id) < Number(messageFrame.id))).toBe(true)
      expect(all.slice(before).every((p) => p.id === messageFrame.id)).toBe(true)

      // The official listener stays connected across keep-alives and reports them as 'unknown'.
      await until(() => unknown.length >= 2, 'pings on the official listener', 10 * KEEP_ALIVE_MS)
      expect(listener.status).toBe('connected')
      const [again] = await Promise.all([
        nextSignal(listener, 'message_created'),
        alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'still listening' } }),
      ])
      expect(again.payload).toEqual({ type: 'text', text: 'still listening' })
    } finally {
      await stream.close()
      await closeListener(listener)
    }
  })

  it('ends a removed participant\'s raw stream after participant_removed; nothing more reaches it and reconnecting is 403', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const bobStream = await listenRaw(apiUrl, conversation.id, bob.user.key)
    const aliceStream = await listenRaw(apiUrl, conversation.id, alice.user.key)
    try {
      const { message: first } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'before' } })
      expect((await bobStream.nextSignal()).data.id).toBe(first.id)

      await alice.removeParticipant({ conversationId: conversation.id, userId: bob.user.id })
      const removal = await bobStream.nextSignal()
      expect(removal).toMatchObject({ type: 'participant_removed', data: { conversationId: conversation.id, participantId: bob.user.id } })
      await bobStream.waitForEnd()

      const { message: after } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'after' } })
      await aliceStream.waitUntil(() => aliceStream.allSignals().some((s) => s.data.id === after.id))
      expect(bobStream.allSignals().some((s) => s.data.id === after.id)).toBe(false)
      expect(bobStream.allSignals().map((s) => s.type)).toEqual(['message_created', 'participant_removed'])

      const retry = await listenRaw(apiUrl, conversation.id, bob.user.key)
      expect(retry.status).toBe(403)
      await retry.close()
    } finally {
      await bobStream.close()
      await aliceStream.close()
    }
  })

  it('official listener of a removed participant is disconnected and receives no further message_created (e2e)', async () => {
    const alice = await connectServerKey(h)
    const bob = await connectServerKey(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const listener1 = await alice.listenConversation({ id: conversation.id })
    const listener2 = await bob.listenConversation({ id: conversation.id })
    const messages1 = record(listener1, 'message_created')
    const messages2 = record(listener2, 'message_created')
    try {
      await Promise.all([
        nextSignal(listener2, 'message_created'),
        nextSignal(listener1, 'message_created'),
        alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'foo' } }),
      ])
      const ended = nextListenerError(listener2)
      await alice.removeParticipant({ conversationId: conversation.id, userId: bob.user.id })
      await ended
      expect(listener2.status).toBe('disconnected')

      await Promise.all([
        nextSignal(listener1, 'message_created', { filter: (m) => m.payload.type === 'text' && m.payload.text === 'bar' }),
        alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'bar' } }),
      ])
      await sleep(50) // fan-out is simultaneous; a little slack for a (wrong) late delivery to show up
      expect(messages1.filter((m) => !m.isBot)).toHaveLength(2)
      expect(messages2.filter((m) => !m.isBot)).toHaveLength(1)

      // Listening again is refused with 403: listen() rejects with the eventsource error event.
      await expect(bob.listenConversation({ id: conversation.id })).rejects.toMatchObject({ status: 403 })
    } finally {
      await closeListener(listener1)
      await closeListener(listener2)
    }
  })

  it('replays exactly the missed signals after Last-Event-ID, in order, without duplicates, then continues live', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const cid = conversation.id

    const first = await listenRaw(apiUrl, cid, alice.user.key)
    const { message: m1 } = await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: 'm1' } })
    const { message: m2 } = await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: 'm2' } })
    const seen = await first.signals(2)
    expect(seen.map((s) => s.data.id)).toEqual([m1.id, m2.id])
    const lastEventId = seen[1]!.id!
    expect(lastEventId).toMatch(/^\d+$/)
    await first.close()

    // Missed while disconnected: a message, an event, a join, the joiner's message, and a deletion of an already-seen message.
    const { message: m3 } = await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: 'm3' } })
    const { event: e1 } = await alice.createEvent({ conversationId: cid, payload: { e: 1 } })
    await alice.addParticipant({ conversationId: cid, userId: bob.user.id })
    const { message: m4 } = await bob.createMessage({ conversationId: cid, payload: { type: 'text', text: 'm4' } })
    await alice.deleteMessage({ id: m2.id })

    const resumed = await listenRaw(apiUrl, cid, alice.user.key, { 'Last-Event-ID': lastEventId })
    try {
      expect(resumed.status).toBe(200)
      const replayed = await resumed.signals(5)
      expect(replayed.map((s) => [s.type, s.data])).toEqual([
        ['message_created', { ...m3, isBot: false }],
        ['event_created', { ...e1, isBot: false }],
        ['participant_added', { conversationId: cid, participantId: bob.user.id }],
        ['message_created', { ...m4, isBot: false }],
        ['message_deleted', { id: m2.id, conversationId: cid, userId: alice.user.id }],
      ])
      const replayIds = ids(replayed)
      expect(replayIds[0]!).toBeGreaterThan(Number(lastEventId))
      expectIncreasing(replayIds)

      // Live again: the next signal is the new message, nothing else was queued, and nothing is repeated.
      const { message: m5 } = await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: 'm5' } })
      const live = await resumed.nextSignal()
      expect(live.data).toEqual({ ...m5, isBot: false })
      expect(Number(live.id)).toBeGreaterThan(replayIds[replayIds.length - 1]!)
      const all = resumed.allSignals()
      expect(all).toHaveLength(6)
      expect(new Set(all.map((s) => s.id)).size).toBe(6)
      expect(all.some((s) => s.type === 'message_created' && (s.data.id === m1.id || s.data.id === m2.id))).toBe(false)
    } finally {
      await resumed.close()
    }
  })

  it('Last-Event-ID from a keep-alive ping resumes without loss; Last-Event-ID 0 replays the whole history', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const cid = conversation.id
    const history = []
    for (let i = 0; i < 3; i++) history.push((await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: `h${i}` } })).message)

    const first = await listenRaw(apiUrl, cid, alice.user.key)
    // A fresh stream replays the window first (alice's own three messages), then pings carry the position.
    expect((await first.signals(3)).map((s) => s.data.id)).toEqual(history.map((m) => m.id))
    const ping = await first.next(10 * KEEP_ALIVE_MS)
    expect(asSignal(ping)?.type).toBe('ping')
    await first.close()
    const { message: missed } = await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: 'missed' } })

    const resumed = await listenRaw(apiUrl, cid, alice.user.key, { 'Last-Event-ID': ping.id! })
    const fromZero = await listenRaw(apiUrl, cid, alice.user.key, { 'Last-Event-ID': '0' })
    try {
      expect((await resumed.nextSignal()).data).toEqual({ ...missed, isBot: false })
      const everything = await fromZero.signals(4)
      expect(everything.map((s) => s.data)).toEqual([...history, missed].map((m) => ({ ...m, isBot: false })))
      expectIncreasing(ids(everything))
    } finally {
      await resumed.close()
      await fromZero.close()
    }
  })

  it('a Last-Event-ID beyond the end replays nothing and the stream continues with new signals', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'old' } })
    const stream = await listenRaw(apiUrl, conversation.id, alice.user.key, { 'Last-Event-ID': '999999' })
    try {
      expect(stream.status).toBe(200)
      const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'new' } })
      const next = await stream.nextSignal()
      expect(next.data).toEqual({ ...message, isBot: false })
      expect(stream.allSignals()).toHaveLength(1)
    } finally {
      await stream.close()
    }
  })

  it('ends every stream of a deleted conversation (raw and official); listening again is 404', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const aliceStream = await listenRaw(apiUrl, conversation.id, alice.user.key)
    const bobStream = await listenRaw(apiUrl, conversation.id, bob.user.key)
    const listener = await bob.listenConversation({ id: conversation.id })
    const listenerEnded = nextListenerError(listener)
    try {
      await alice.deleteConversation({ id: conversation.id })
      await aliceStream.waitForEnd()
      await bobStream.waitForEnd()
      await listenerEnded
      expect(listener.status).toBe('disconnected')
      const again = await listenRaw(apiUrl, conversation.id, alice.user.key)
      expect(again.status).toBe(404)
      await again.close()
      await expect(alice.listenConversation({ id: conversation.id })).rejects.toMatchObject({ status: 404 })
    } finally {
      await aliceStream.close()
      await bobStream.close()
      await closeListener(listener)
    }
  })

  it('refuses to open a stream: 403 for a non-participant (client listen() rejects), 404 unknown conversation, 401 without key, 400 bad Last-Event-ID', async () => {
    const alice = await connectJwt(h)
    const mallory = await connectJwt(h)
    const { conversation } = await alice.createConversation({})

    await expect(mallory.listenConversation({ id: conversation.id })).rejects.toMatchObject({ type: 'error', status: 403 })
    await expect(alice.listenConversation({ id: 'no-such-conversation' })).rejects.toMatchObject({ status: 404 })

    const forbidden = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/listen`, { key: mallory.user.key })
    expect(forbidden.status).toBe(403)
    expect(forbidden.body).toMatchObject({ code: 403, type: 'Forbidden' })
    const noKey = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/listen`)
    expect(noKey.status).toBe(401)
    expect(noKey.body).toMatchObject({ code: 401, type: 'Unauthorized' })
    const badId = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/listen`, { key: alice.user.key, headers: { 'last-event-id': 'abc' } })
    expect(badId.status).toBe(400)
  })

  it('frees server-side resources when clients disconnect', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const baseline = h.pubsub.subscriptionCount()
    const openBaseline = h.app.services.streams.openCount
    const streams = await Promise.all([1, 2, 3].map(() => listenRaw(apiUrl, conversation.id, alice.user.key)))
    const listener = await alice.listenConversation({ id: conversation.id })
    await until(() => h.pubsub.subscriptionCount() === baseline + 4, 'four subscriptions')
    expect(h.app.services.streams.openCount).toBe(openBaseline + 4)
    await Promise.all(streams.map((s) => s.close()))
    await closeListener(listener)
    await until(() => h.pubsub.subscriptionCount() === baseline, 'subscriptions released')
    await until(() => h.app.services.streams.openCount === openBaseline, 'open streams released')
  })

  it('a user who deletes themselves stops receiving the conversations they took part in', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const bobStream = await listenRaw(apiUrl, conversation.id, bob.user.key)
    const aliceStream = await listenRaw(apiUrl, conversation.id, alice.user.key)
    try {
      await bob.deleteUser({})
      // Bob is no longer a participant (his participations went with him)...
      expect((await alice.listParticipants({ conversationId: conversation.id })).participants.map((p) => p.id)).toEqual([alice.user.id])
      const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'secret' } })
      await aliceStream.waitUntil(() => aliceStream.allSignals().some((s) => s.data.id === message.id))
      await sleep(50)
      // ...so his still-open stream must not receive what is posted afterwards, and should end.
      expect(bobStream.allSignals().filter((s) => s.type === 'message_created').map((s) => s.data.id)).not.toContain(message.id)
      await bobStream.waitForEnd(2000)
    } finally {
      await bobStream.close()
      await aliceStream.close()
    }
  })
})
