/**
 * Crash durability (threats.md R5): Parley as a process of its own takes messages from several writers over real
 * HTTP and is killed with SIGKILL while they write, over several cycles on the same data. SQLite's group commit
 * answers 201 only after the batch's COMMIT, and PostgreSQL's batched append after its statement committed, so:
 * - every acknowledged message (a 201 received) is in the conversation afterwards, with its text;
 * - no message is there twice, and each conversation's messages are in the order they were sent (a writer sends its
 *   next message only after the last one was answered, so the order is known);
 * - a message whose request got no answer (in flight at the kill) is there once or not at all;
 * - on SQLite, the file passes `PRAGMA integrity_check` afterwards.
 * The kill points come from a seeded generator (PARLEY_CRASH_SEED replays a run; PARLEY_CRASH_CYCLES for more).
 */
import * as chat from '@botpress/chat'
import SqliteDatabase from 'better-sqlite3'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { restartParley, startParley, type Harness } from '../helpers/harness.js'
import { startParleyProcess } from '../helpers/parley-process.js'
import { seededRandom } from '../helpers/seeded-random.js'
import { listAll, textOf } from '../runtime/helpers.js'
import { raw, type RawResponse } from './helpers.js'

const CYCLES = Math.max(1, Number(process.env.PARLEY_CRASH_CYCLES ?? 4))
const SEED = Number(process.env.PARLEY_CRASH_SEED ?? Date.now() % 100_000)
const WRITERS = 8

interface Writer {
  key: string
  conversationId: string
  /** Texts in the order they were sent, each once. */
  sent: string[]
  /** Texts answered 201, with the message id the answer gave. */
  acked: Map<string, string>
}

/** Sends messages one after another until a request fails (the server is gone). */
async function write(url: string, w: Writer, cycle: number): Promise<void> {
  for (let n = 0; ; n++) {
    const text = `c${cycle}-m${n}`
    w.sent.push(text)
    let res: RawResponse
    try {
      res = await raw(url, 'POST', '/messages', { key: w.key, body: { conversationId: w.conversationId, payload: { type: 'text', text } } })
    } catch {
      return // killed: this one is in flight, neither acknowledged nor refused
    }
    if (res.status !== 201) throw new Error(`createMessage answered ${res.status}: ${res.text}`)
    w.acked.set(text, res.body.message.id)
  }
}

describe('crash durability: kill -9 while writers post messages', () => {
  let h: Harness
  let url: string
  const writers: Writer[] = []

  beforeAll(async () => {
    h = await startParley({ listen: true })
    url = (await h.createChatIntegration()).url
    for (let i = 0; i < WRITERS; i++) {
      const client = await chat.Client.connect({ apiUrl: url })
      const { conversation } = await client.createConversation({})
      writers.push({ key: client.user.key, conversationId: conversation.id, sent: [], acked: new Map() })
    }
    await h.stop()
  }, 60_000)

  afterAll(async () => {
    if (h) await (await restartParley(h)).close()
  }, 60_000)

  it(`loses no acknowledged message and duplicates none over ${CYCLES} kills (seed ${SEED})`, async () => {
    const random = seededRandom(SEED)
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const server = await startParleyProcess(h)
      let failure: unknown
      const writing = writers.map((w) => write(url, w, cycle).catch((err: unknown) => (failure ??= err)))
      try {
        // Let the writers reach a steady pace, then kill at a random point of the next ~400 ms.
        const before = writers.reduce((n, w) => n + w.acked.size, 0)
        const deadline = Date.now() + 30_000
        while (writers.reduce((n, w) => n + w.acked.size, 0) < before + 50 && failure === undefined) {
          if (Date.now() > deadline) throw new Error(`cycle ${cycle}: 50 messages not acknowledged within 30 s\n${server.output()}`)
          await new Promise((r) => setTimeout(r, 5))
        }
        if (failure !== undefined) throw failure
        await new Promise((r) => setTimeout(r, Math.floor(random() * 400)))
      } finally {
        await server.kill()
        await Promise.all(writing)
      }
    }

    h = await restartParley(h)
    const acked = writers.reduce((n, w) => n + w.acked.size, 0)
    expect(acked, 'messages acknowledged over the run').toBeGreaterThan(CYCLES * 50)
    for (const w of writers) {
      const reader = await chat.Client.connect({ apiUrl: url, userKey: w.key })
      const stored = (await listAll(reader, w.conversationId)).map((m) => ({ id: m.id, text: textOf(m) }))
      const texts = stored.map((m) => m.text)
      expect(new Set(texts).size, `a message stored twice in ${w.conversationId}`).toBe(texts.length)
      const byText = new Map(stored.map((m) => [m.text, m.id]))
      const lost = [...w.acked].filter(([text, id]) => byText.get(text) !== id)
      expect(lost, `acknowledged messages missing or changed in ${w.conversationId} (seed ${SEED})`).toEqual([])
      // Stored in the order sent: the stored texts are a subsequence of the sent ones, in order.
      const order = texts.map((t) => w.sent.indexOf(t))
      expect(order.every((i) => i >= 0), 'a stored text that was never sent').toBe(true)
      expect(order, 'messages out of the order they were sent').toEqual([...order].sort((a, b) => a - b))
    }
    if (h.storeKind === 'sqlite') {
      const db = new SqliteDatabase(join(h.dataDir, 'parley.db'), { readonly: true })
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
      } finally {
        db.close()
      }
    }
  }, 180_000)
})
