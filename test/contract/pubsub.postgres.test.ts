import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_NOTIFY_BYTES, pgChannelName } from '../../src/pubsub/pg-notify.js'
import { PostgresPubSub } from '../../src/pubsub/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { describePubSubContract } from './pubsub.contract.js'

const hasPg = pgBaseUrl() !== null
let url: string

beforeAll(async () => {
  if (hasPg) url = await freshDatabase()
})

afterAll(async () => {
  if (url) await dropDatabase(url)
})

const waitFor = (check: () => void, timeout = 5000) => vi.waitFor(check, { timeout, interval: 10 })
const channel = () => `conv:${randomUUID()}`

describe.skipIf(!hasPg)('postgres', () => {
  describePubSubContract('postgres', async () => {
    const pubsub = new PostgresPubSub({ url })
    return { pubsub, cleanup: () => pubsub.close() }
  })

  describe('PostgresPubSub specifics', () => {
    /** Two instances on one database, and a fresh channel; both closed after `fn`. */
    async function twoInstances(fn: (a: PostgresPubSub, b: PostgresPubSub, ch: string) => Promise<void>): Promise<void> {
      const a = new PostgresPubSub({ url })
      const b = new PostgresPubSub({ url })
      try {
        await fn(a, b, channel())
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    }

    it('a message published on one instance reaches subscribers on another (and on itself)', () => twoInstances(async (a, b, ch) => {
      const onA: string[] = []
      const onB: string[] = []
      await a.subscribe(ch, (m) => onA.push(m))
      await b.subscribe(ch, (m) => onB.push(m))
      for (let i = 0; i < 20; i++) await a.publish(ch, `m${i}`)
      await b.publish(ch, 'from b')
      const expected = [...Array.from({ length: 20 }, (_, i) => `m${i}`), 'from b']
      await waitFor(() => {
        expect(onB).toEqual(expected)
        expect(onA).toEqual(expected)
      })
    }))

    it('deliverLocally: this instance\'s subscribers get the message at once (awaited), and its copy through the database is skipped', () => twoInstances(async (a, b, ch) => {
      const onA: string[] = []
      const onB: string[] = []
      let handled = 0
      await a.subscribe(ch, (m) => {
        onA.push(m)
        return new Promise<void>((resolve) => setImmediate(() => {
          handled++
          resolve()
        }))
      })
      await b.subscribe(ch, (m) => onB.push(m))
      // As the PostgreSQL store does, the notification goes out on another connection; delivered locally while
      // its transaction is still open, so the database's copy surely comes after (after the commit, in production,
      // it may also come first: then the subscribers read twice, and nothing is lost).
      const sender = new pg.Client({ connectionString: url })
      await sender.connect()
      await sender.query('BEGIN')
      await sender.query('SELECT pg_notify($1, $2)', [pgChannelName(ch), 'changed:x.1'])
      await a.deliverLocally(ch, 'changed:x.1')
      await sender.query('COMMIT')
      await sender.end()
      expect(onA).toEqual(['changed:x.1'])
      expect(handled).toBe(1)
      await a.publish(ch, 'marker')
      await waitFor(() => {
        expect(onA).toEqual(['changed:x.1', 'marker'])
        expect(onB).toEqual(['changed:x.1', 'marker'])
      })
      // No subscriber here: nothing to deliver, nothing remembered.
      await a.deliverLocally(channel(), 'changed:x.2')
    }))

    it('refuses messages over the NOTIFY limit, and NUL or lone surrogates', async () => {
      const pubsub = new PostgresPubSub({ url })
      try {
        const ch = channel()
        const got: string[] = []
        await pubsub.subscribe(ch, (m) => got.push(m))
        await expect(pubsub.publish(ch, 'x'.repeat(MAX_NOTIFY_BYTES + 1))).rejects.toThrow(RangeError)
        // bytes, not UTF-16 units: 2000 emoji are 8000 bytes
        await expect(pubsub.publish(ch, '😀'.repeat(2000))).rejects.toThrow(RangeError)
        await expect(pubsub.publish(ch, 'a\u0000b')).rejects.toThrow(TypeError)
        await expect(pubsub.publish(ch, 'a\ud800b')).rejects.toThrow(TypeError)
        const biggest = 'é'.repeat(MAX_NOTIFY_BYTES / 2)
        await pubsub.publish(ch, biggest)
        await waitFor(() => expect(got).toEqual([biggest]))
      } finally {
        await pubsub.close()
      }
    })

    it('channel names are valid identifiers of any input: long, quoted, mixed case, Unicode', async () => {
      const pubsub = new PostgresPubSub({ url })
      try {
        const names = ['a'.repeat(500), 'Say "hi"; DROP TABLE x; --', 'MixedCase', 'mixedcase', 'ключ 🔑', '', ' ']
        const got = new Map<string, string[]>()
        for (const n of names) {
          got.set(n, [])
          await pubsub.subscribe(n, (m) => got.get(n)!.push(m))
        }
        for (const n of names) await pubsub.publish(n, `for ${n}`)
        await waitFor(() => {
          for (const n of names) expect(got.get(n)).toEqual([`for ${n}`])
        })
        for (const n of names) expect(pgChannelName(n)).toMatch(/^parley_[0-9a-f]{40}$/)
      } finally {
        await pubsub.close()
      }
    })

    it('reconnects with backoff after its connection is killed, re-LISTENs, and tells onReconnect', async () => {
      const errors: Error[] = []
      const pubsub = new PostgresPubSub({ url, reconnect: { initialDelayMs: 50, maxDelayMs: 500 }, onError: (e) => errors.push(e) })
      const publisher = new PostgresPubSub({ url })
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      try {
        const channels = [channel(), channel(), channel()]
        const got: string[] = []
        for (const ch of channels) await pubsub.subscribe(ch, (m) => got.push(m))
        let reconnects = 0
        pubsub.onReconnect(() => reconnects++)
        await publisher.publish(channels[0]!, 'before')
        await waitFor(() => expect(got).toEqual(['before']))

        const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'parley-listen' AND datname = current_database()`)
        expect(killed.rowCount).toBeGreaterThanOrEqual(1)
        await waitFor(() => expect(reconnects).toBe(1))
        expect(pubsub.connected).toBe(true)
        expect(errors.length).toBeGreaterThan(0)
        for (const ch of channels) await publisher.publish(ch, `after ${channels.indexOf(ch)}`)
        await waitFor(() => expect(got).toEqual(['before', 'after 0', 'after 1', 'after 2']))
        // a subscription made after the reconnect works too
        const late: string[] = []
        const ch = channel()
        await pubsub.subscribe(ch, (m) => late.push(m))
        await publisher.publish(ch, 'late')
        await waitFor(() => expect(late).toEqual(['late']))
      } finally {
        await admin.end()
        await Promise.all([pubsub.close(), publisher.close()])
      }
    })

    it('subscribe waits for the listening connection, and fails after its timeout when the server is unreachable', async () => {
      const pubsub = new PostgresPubSub({ url: 'postgres://postgres@127.0.0.1:1/none', subscribeTimeoutMs: 500, reconnect: { initialDelayMs: 20, maxDelayMs: 100 } })
      try {
        const started = Date.now()
        await expect(pubsub.subscribe(channel(), () => {})).rejects.toThrow(/not connected|ECONNREFUSED/)
        expect(Date.now() - started).toBeLessThan(3000)
        expect(pubsub.subscriptionCount()).toBe(0)
      } finally {
        await pubsub.close()
      }
    })

    it('one LISTEN per channel; unsubscribing the last handler UNLISTENs it', async () => {
      const pubsub = new PostgresPubSub({ url })
      try {
        const a = channel()
        const b = channel()
        const offs = [await pubsub.subscribe(a, () => {}), await pubsub.subscribe(a, () => {}), await pubsub.subscribe(b, () => {})]
        expect(await pubsub.listeningChannels()).toEqual([pgChannelName(a), pgChannelName(b)].sort())
        await offs[0]!()
        expect(await pubsub.listeningChannels()).toEqual([pgChannelName(a), pgChannelName(b)].sort())
        await offs[1]!()
        expect(await pubsub.listeningChannels()).toEqual([pgChannelName(b)])
        await offs[2]!()
        expect(await pubsub.listeningChannels()).toEqual([])
        expect(pubsub.subscriptionCount()).toBe(0)
      } finally {
        await pubsub.close()
      }
    })
  })
})
