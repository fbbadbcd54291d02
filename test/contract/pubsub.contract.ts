/**
 * The PubSub contract: the in-process implementation now, PostgreSQL LISTEN/NOTIFY later. Delivery
 * may be asynchronous, so tests wait for what must arrive and use a sentinel message to decide that
 * what must not arrive did not.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { PubSub } from '../../src/pubsub/pubsub.js'
import { setTimeout as sleep } from 'node:timers/promises'

export type PubSubFactory = () => Promise<{ pubsub: PubSub; cleanup(): Promise<void> }>

const channel = (name = 'ch') => `${name}_${randomUUID().replaceAll('-', '')}`


/** A handler that records what it receives. */
function recorder() {
  const received: string[] = []
  const handler = vi.fn((message: string) => {
    received.push(message)
  })
  return { received, handler }
}

const waitFor = (check: () => void) => vi.waitFor(check, { timeout: 5000, interval: 5 })

export function describePubSubContract(name: string, factory: PubSubFactory): void {
  describe(`PubSub contract: ${name}`, () => {
    let pubsub: PubSub
    let cleanup: () => Promise<void>

    beforeEach(async () => {
      const made = await factory()
      pubsub = made.pubsub
      cleanup = made.cleanup
    })

    afterEach(async () => {
      await cleanup()
    })

    it('delivers a message to every subscriber of the channel', async () => {
      const ch = channel()
      const subs = Array.from({ length: 25 }, () => recorder())
      for (const s of subs) await pubsub.subscribe(ch, s.handler)
      await pubsub.publish(ch, 'hello')
      await waitFor(() => {
        for (const s of subs) expect(s.received).toEqual(['hello'])
      })
    })

    it('delivers the message text verbatim', async () => {
      const ch = channel()
      const r = recorder()
      await pubsub.subscribe(ch, r.handler)
      const messages = [
        JSON.stringify({ seq: 12, kind: 'message_created', id: randomUUID() }),
        'ünïcödé 😀 中文 \u2028 "quotes" \\ \n newline',
        'x'.repeat(7000),
        ' leading and trailing spaces ',
      ]
      for (const m of messages) await pubsub.publish(ch, m)
      await waitFor(() => expect(r.received).toHaveLength(messages.length))
      expect([...r.received].sort()).toEqual([...messages].sort())
    })

    it('preserves publish order within a channel', async () => {
      const ch = channel()
      const r = recorder()
      await pubsub.subscribe(ch, r.handler)
      const sent = Array.from({ length: 50 }, (_, i) => `m${i}`)
      for (const m of sent) await pubsub.publish(ch, m)
      await waitFor(() => expect(r.received).toHaveLength(sent.length))
      expect(r.received).toEqual(sent)
    })

    it('concurrent publishes, identical ones included, are each delivered exactly once', async () => {
      const ch = channel()
      const r = recorder()
      await pubsub.subscribe(ch, r.handler)
      const sent = [...Array.from({ length: 300 }, (_, i) => `m${i}`), ...Array.from({ length: 30 }, () => 'same')]
      await Promise.all(sent.map((m) => pubsub.publish(ch, m)))
      await waitFor(() => expect(r.received.length).toBeGreaterThanOrEqual(sent.length))
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect([...r.received].sort()).toEqual([...sent].sort())
    })

    it('does not deliver to subscribers of other channels', async () => {
      const a = channel('a')
      const b = channel('b')
      const prefix = channel('a').slice(0, 2) // shares a prefix with `a`
      const ra = recorder()
      const rb = recorder()
      const rp = recorder()
      await pubsub.subscribe(a, ra.handler)
      await pubsub.subscribe(b, rb.handler)
      await pubsub.subscribe(prefix, rp.handler)
      await pubsub.publish(a, 'for a')
      await pubsub.publish(b, 'for b')
      await pubsub.publish(prefix, 'for prefix')
      await waitFor(() => {
        expect(ra.received).toEqual(['for a'])
        expect(rb.received).toEqual(['for b'])
        expect(rp.received).toEqual(['for prefix'])
      })
      // sentinels: anything stray would have arrived before them
      await pubsub.publish(a, 'sentinel a')
      await pubsub.publish(b, 'sentinel b')
      await waitFor(() => {
        expect(ra.received).toEqual(['for a', 'sentinel a'])
        expect(rb.received).toEqual(['for b', 'sentinel b'])
      })
      expect(rp.received).toEqual(['for prefix'])
    })

    it('publishing to a channel nobody listens to is fine', async () => {
      await expect(pubsub.publish(channel('nobody'), 'lost')).resolves.toBeUndefined()
    })

    it('unsubscribe stops delivery to that subscription only', async () => {
      const ch = channel()
      const gone = recorder()
      const stays = recorder()
      const unsubscribe = await pubsub.subscribe(ch, gone.handler)
      await pubsub.subscribe(ch, stays.handler)
      await pubsub.publish(ch, 'one')
      await waitFor(() => {
        expect(gone.received).toEqual(['one'])
        expect(stays.received).toEqual(['one'])
      })
      await unsubscribe()
      await pubsub.publish(ch, 'two')
      await waitFor(() => expect(stays.received).toEqual(['one', 'two']))
      await sleep(20)
      expect(gone.received).toEqual(['one'])
      // unsubscribing twice is harmless
      await expect(unsubscribe()).resolves.toBeUndefined()
      await pubsub.publish(ch, 'three')
      await waitFor(() => expect(stays.received).toEqual(['one', 'two', 'three']))
      expect(gone.received).toEqual(['one'])
    })

    it('the last unsubscribe leaves the channel usable for new subscribers', async () => {
      const ch = channel()
      const first = recorder()
      const unsubscribe = await pubsub.subscribe(ch, first.handler)
      await unsubscribe()
      const second = recorder()
      const unsubscribeSecond = await pubsub.subscribe(ch, second.handler)
      // a stale unsubscribe must not remove the new subscription
      await unsubscribe()
      await pubsub.publish(ch, 'after')
      await waitFor(() => expect(second.received).toEqual(['after']))
      expect(first.received).toEqual([])
      await unsubscribeSecond()
    })

    it('the same handler on two channels receives from both; unsubscribing one keeps the other', async () => {
      const a = channel('a')
      const b = channel('b')
      const r = recorder()
      const offA = await pubsub.subscribe(a, r.handler)
      await pubsub.subscribe(b, r.handler)
      await pubsub.publish(a, 'a1')
      await pubsub.publish(b, 'b1')
      await waitFor(() => expect([...r.received].sort()).toEqual(['a1', 'b1']))
      await offA()
      await pubsub.publish(a, 'a2')
      await pubsub.publish(b, 'b2')
      await waitFor(() => expect(r.received).toContain('b2'))
      await sleep(20)
      expect(r.received).not.toContain('a2')
    })

    it('a throwing handler does not stop delivery to the others, nor fail publish', async () => {
      const ch = channel()
      const before = recorder()
      const thrower = vi.fn(() => {
        throw new Error('subscriber failure')
      })
      const after = recorder()
      await pubsub.subscribe(ch, before.handler)
      await pubsub.subscribe(ch, thrower)
      await pubsub.subscribe(ch, after.handler)
      await expect(pubsub.publish(ch, 'one')).resolves.toBeUndefined()
      await waitFor(() => {
        expect(before.received).toEqual(['one'])
        expect(after.received).toEqual(['one'])
        expect(thrower).toHaveBeenCalledTimes(1)
      })
      // the failing subscriber stays subscribed, and delivery keeps working
      await expect(pubsub.publish(ch, 'two')).resolves.toBeUndefined()
      await waitFor(() => {
        expect(before.received).toEqual(['one', 'two'])
        expect(after.received).toEqual(['one', 'two'])
        expect(thrower).toHaveBeenCalledTimes(2)
      })
      expect(thrower).toHaveBeenLastCalledWith('two')
    })

    it('a handler may unsubscribe itself while a message is being delivered', async () => {
      const ch = channel()
      const other = recorder()
      const received: string[] = []
      let off: (() => Promise<void>) | undefined
      await pubsub.subscribe(ch, other.handler)
      off = await pubsub.subscribe(ch, (m) => {
        received.push(m)
        void off?.()
      })
      await pubsub.publish(ch, 'one')
      await waitFor(() => expect(other.received).toEqual(['one']))
      await sleep(10)
      await pubsub.publish(ch, 'two')
      await waitFor(() => expect(other.received).toEqual(['one', 'two']))
      await sleep(20)
      expect(received).toEqual(['one'])
    })

    it('close() resolves and ends delivery', async () => {
      const ch = channel()
      const r = recorder()
      const unsubscribe = await pubsub.subscribe(ch, r.handler)
      await pubsub.publish(ch, 'before')
      await waitFor(() => expect(r.received).toEqual(['before']))
      await expect(pubsub.close()).resolves.toBeUndefined()
      await pubsub.publish(ch, 'after').catch(() => undefined)
      await sleep(50)
      expect(r.received).toEqual(['before'])
      // streams that end after shutdown still unsubscribe without crashing
      await expect(unsubscribe()).resolves.toBeUndefined()
    })
  })
}
