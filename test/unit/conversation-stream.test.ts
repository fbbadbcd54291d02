/**
 * ConversationStreams' delivery logic under every interleaving a seeded scheduler can produce
 * (issue #13, item 9): a store whose reads take a random number of event-loop turns and see the log
 * as it was at a random moment of the read, commits whose notifications arrive late and coalesced,
 * replays longer than a page, and streams closed at random moments and followed again with the last
 * delivered seq as Last-Event-ID. Whatever the schedule, the concatenation of what the streams
 * delivered is the log after the first Last-Event-ID, each seq once, in order.
 */
import { describe, expect, it } from 'vitest'
import type { ChatService } from '../../src/domain/chat-service.js'
import { conversationChannel } from '../../src/domain/conversation-log.js'
import { ConversationStreams, type OpenStream } from '../../src/domain/conversation-stream.js'
import { MemoryPubSub } from '../../src/pubsub/memory.js'
import type { SignalRecord, Store, UserRow } from '../../src/store/store.js'
import { seededRandom } from '../helpers/seeded-random.js'

const SCENARIOS = Number(process.env.PARLEY_STREAM_SCENARIOS ?? 1000)

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await turn()
}

const user: UserRow = { integrationId: 'i', id: 'u', name: null, pictureUrl: null, profile: null, isBot: false, createdAt: 0, updatedAt: 0 }
const signal = (seq: number): SignalRecord => ({ seq, kind: 'participant_added', conversationId: 'c', participantId: `p${seq}` })

async function scenario(seed: number): Promise<{ delivered: number[]; expected: number[]; streams: number }> {
  const random = seededRandom(seed)
  const log: SignalRecord[] = []
  const pubsub = new MemoryPubSub()
  // A read sees the log as it was at some moment between its call and its answer.
  const read = async <T>(f: () => T): Promise<T> => {
    const before = Math.floor(random() * 3)
    const after = Math.floor(random() * 3)
    await turns(before)
    const value = f()
    await turns(after)
    return value
  }
  const store = {
    getConversation: (_i: string, _c: string) => read(() => ({ lastSeq: log.length })),
    signalsSince: (_i: string, _c: string, afterSeq: number, limit: number) => read(() => log.slice(afterSeq, afterSeq + limit)),
  } as unknown as Store
  const chat = { getConversation: async () => ({}) } as unknown as ChatService
  const streams = new ConversationStreams(store, pubsub, chat)

  const initial = Math.floor(random() * 450) // a replay of up to three pages
  for (let i = 0; i < initial; i++) log.push(signal(log.length + 1))
  const appends = 20 + Math.floor(random() * 60)
  const first = Math.floor(random() * (initial + 1))

  const delivered: number[] = []
  let lastId = first
  let current: OpenStream | undefined
  let ended: string | undefined
  const follow = async () => {
    const from = lastId
    current = await streams.follow(user, 'c', from, {
      open: () => {},
      send: (s) => {
        delivered.push(s.seq)
        lastId = s.seq
      },
      end: (reason) => {
        ended = reason
      },
    })
  }

  // Writer: commits, each notified some turns later (possibly after later commits: coalesced).
  const writer = (async () => {
    for (let i = 0; i < appends; i++) {
      await turns(Math.floor(random() * 4))
      const burst = 1 + Math.floor(random() * 3)
      for (let b = 0; b < burst; b++) log.push(signal(log.length + 1))
      const delay = Math.floor(random() * 4)
      void turns(delay).then(() => pubsub.publish(conversationChannel('i', 'c'), 'changed'))
    }
  })()
  // Listener: follows, and is cut at random moments (during replay, between deliveries, while idle).
  let cuts = 0
  await follow()
  let writing = true
  void writer.then(() => {
    writing = false
  })
  while (writing) {
    await turns(Math.floor(random() * 12))
    if (random() < 0.5) {
      cuts++
      await current!.close()
      if (random() < 0.5) await turns(Math.floor(random() * 5))
      await follow()
    }
  }
  // Every notification published; let the last stream catch up.
  await turns(20)
  for (let i = 0; i < 200 && lastId < log.length; i++) await turns(5)
  await current!.close()
  expect(ended).toBeUndefined()
  return { delivered, expected: log.slice(first).map((s) => s.seq), streams: cuts + 1 }
}

describe('ConversationStreams: gap-free, ordered delivery across closes and Last-Event-ID follows, under random schedules', () => {
  it(`${SCENARIOS} seeded schedules`, async () => {
    const failures: string[] = []
    let streams = 0
    for (let seed = 1; seed <= SCENARIOS; seed++) {
      const r = await scenario(seed)
      streams += r.streams
      if (JSON.stringify(r.delivered) !== JSON.stringify(r.expected)) {
        const missing = r.expected.filter((s) => !r.delivered.includes(s))
        failures.push(`seed ${seed}: ${r.delivered.length} delivered for ${r.expected.length}; missing ${JSON.stringify(missing.slice(0, 10))}`)
      }
    }
    expect(failures).toEqual([])
    expect(streams).toBeGreaterThan(SCENARIOS * 2)
  }, 120_000)

  it('a replay waits for the client to take each page before reading the next (bounded buffering, the event loop gets turns)', async () => {
    const log = Array.from({ length: 450 }, (_, i) => signal(i + 1))
    const store = {
      getConversation: async () => ({ lastSeq: log.length }),
      signalsSince: async (_i: string, _c: string, afterSeq: number, limit: number) => log.slice(afterSeq, afterSeq + limit),
    } as unknown as Store
    const streams = new ConversationStreams(store, new MemoryPubSub(), { getConversation: async () => ({}) } as unknown as ChatService)
    const delivered: number[] = []
    const waiting: (() => void)[] = []
    const stream = await streams.follow(user, 'c', 0, {
      open: () => {},
      send: (s) => void delivered.push(s.seq),
      backlog: () => new Promise<void>((resolve) => waiting.push(resolve)),
      end: () => {},
    })
    await turns(10)
    expect(delivered.length).toBe(200)
    waiting.shift()!()
    await turns(10)
    expect(delivered.length).toBe(400)
    waiting.shift()!()
    await turns(10)
    expect(delivered).toEqual(log.map((s) => s.seq))
    expect(waiting).toEqual([]) // the last, partial page is followed by no wait
    await stream.close()
  })
})
