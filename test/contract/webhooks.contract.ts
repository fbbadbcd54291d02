/**
 * Contract of WebhookStore (src/store/webhook-store.ts), the webhook integration's durable delivery
 * queue, run against each engine: idempotent enqueue, lease-based claims (concurrent claimers get
 * each delivery exactly once; on PostgreSQL they use separate connection pools, as separate
 * instances would), expired leases taken over, only the lease holder finishes, extends or releases,
 * and the blob names a bot's deletion must clean up.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import type { NewWebhookDelivery } from '../../src/store/webhook-store.js'
import { seed } from './store.contract.js'

/** `second` is another handle on the same database (another instance's pool), or the same store. */
export type WebhookStoreFactory = () => Promise<{ store: Store; second: Store; cleanup: () => Promise<void> }>

export function describeWebhookContract(name: string, factory: WebhookStoreFactory): void {
  describe(`WebhookStore contract: ${name}`, () => {
    let store: Store
    let second: Store
    let cleanup: () => Promise<void>
    let integrationId: string
    let botId: string
    let otherIntegrationId: string
    let created = 1_000_000
    /** Each test claims at its own, later time, so leases left by an earlier test never interfere. */
    let epoch = 0
    const later = () => (++epoch) * 10 ** 12

    const delivery = (over: Partial<NewWebhookDelivery> = {}): NewWebhookDelivery => ({
      id: randomUUID(), integrationId, idempotencyKey: null, blobName: null, size: 2, contentType: 'application/json', createdAt: ++created, ...over,
    })
    /** Queues a delivery the contract expects to be queued (its integration exists). */
    const enqueue = async (on: Store, d: NewWebhookDelivery) => {
      const queued = await on.webhooks.enqueue(d)
      if (!queued) throw new Error(`enqueue answered undefined for the live integration ${d.integrationId}`)
      return queued
    }
    /** Finishes everything still pending, so that the next test starts with an empty queue. */
    const drain = async (now: number) => {
      for (let d; (d = await store.webhooks.claim('drain', now, 1));) await store.webhooks.finish(d.id, 'drain', 'done', now)
    }

    beforeAll(async () => {
      ;({ store, second, cleanup } = await factory())
      const fx = await seed(store)
      ;({ id: integrationId } = fx.a)
      botId = fx.bot.id
      otherIntegrationId = (await seed(store)).a.id
    })
    afterAll(async () => cleanup?.())

    it('enqueue: a repeated idempotency key returns the first delivery; the key is per integration; no key is always new', async () => {
      const first = await enqueue(store, delivery({ idempotencyKey: 'key-1' }))
      expect(first.created).toBe(true)
      expect(first.delivery).toMatchObject({ integrationId, idempotencyKey: 'key-1', status: 'pending', attempts: 0, leaseOwner: null, leaseUntil: 0, processedAt: null })
      const again = await enqueue(second, delivery({ idempotencyKey: 'key-1' }))
      expect(again).toEqual({ delivery: first.delivery, created: false })
      expect(await store.webhooks.findByIdempotencyKey(integrationId, 'key-1')).toEqual(first.delivery)
      expect((await enqueue(store, delivery({ integrationId: otherIntegrationId, idempotencyKey: 'key-1' }))).created).toBe(true)
      expect((await enqueue(store, delivery())).created).toBe(true)
      expect((await enqueue(store, delivery())).created).toBe(true)
      expect(await store.webhooks.findByIdempotencyKey(integrationId, 'unknown')).toBeUndefined()
      expect(await store.webhooks.get(randomUUID())).toBeUndefined()
      await drain(later())
    })

    it('claims the oldest pending delivery first', async () => {
      const a = await enqueue(store, delivery())
      const b = await enqueue(store, delivery())
      const now = later()
      expect((await store.webhooks.claim('w', now, 1000))?.id).toBe(a.delivery.id)
      expect((await store.webhooks.claim('w', now, 1000))?.id).toBe(b.delivery.id)
      expect(await store.webhooks.claim('w', now, 1000)).toBeUndefined()
      await drain(now + 1000)
    })

    it('gives each pending delivery to exactly one of many concurrent claimers', async () => {
      const ids = new Set<string>()
      for (let i = 0; i < 40; i++) ids.add((await enqueue(store, delivery())).delivery.id)
      const now = later()
      const claimed: string[] = []
      await Promise.all(Array.from({ length: 8 }, (_, w) => (async () => {
        const mine = w % 2 === 0 ? store : second
        for (;;) {
          const d = await mine.webhooks.claim(`worker-${w}`, now, 60_000)
          if (!d) return
          expect(d).toMatchObject({ leaseOwner: `worker-${w}`, leaseUntil: now + 60_000, attempts: 1 })
          claimed.push(d.id)
          expect(await mine.webhooks.finish(d.id, `worker-${w}`, 'done', now)).toBe(true)
        }
      })()))
      expect(claimed.length).toBe(ids.size)
      expect(new Set(claimed)).toEqual(ids)
    })

    it('an expired lease is taken over; only the holder finishes, and a finished delivery is never claimed again', async () => {
      const { delivery: d } = await enqueue(store, delivery({ blobName: 'blob-x' }))
      const now = later()
      expect((await store.webhooks.claim('a', now, 1000))?.id).toBe(d.id)
      expect(await second.webhooks.claim('b', now + 999, 1000)).toBeUndefined()
      expect(await second.webhooks.claim('b', now + 1000, 1000)).toMatchObject({ id: d.id, leaseOwner: 'b', attempts: 2 })
      expect(await store.webhooks.finish(d.id, 'a', 'done', now + 1500)).toBe(false)
      expect(await second.webhooks.finish(d.id, 'b', 'failed', now + 1500)).toBe(true)
      expect(await store.webhooks.get(d.id)).toMatchObject({ status: 'failed', processedAt: now + 1500, blobName: null, leaseOwner: null })
      expect(await second.webhooks.finish(d.id, 'b', 'done', now + 1600)).toBe(false)
      expect(await store.webhooks.claim('c', now + 10 ** 9, 1000)).toBeUndefined()
    })

    it('extendLease and release act only for the holder', async () => {
      const { delivery: d } = await enqueue(store, delivery())
      const now = later()
      await store.webhooks.claim('holder', now, 1000)
      await store.webhooks.extendLease(d.id, 'intruder', now + 10 ** 6)
      expect((await store.webhooks.get(d.id))?.leaseUntil).toBe(now + 1000)
      await store.webhooks.extendLease(d.id, 'holder', now + 5000)
      expect((await store.webhooks.get(d.id))?.leaseUntil).toBe(now + 5000)
      expect(await second.webhooks.claim('other', now + 4000, 1000)).toBeUndefined()
      await store.webhooks.release(d.id, 'intruder')
      expect(await second.webhooks.claim('other', now + 100, 1000)).toBeUndefined()
      await store.webhooks.release(d.id, 'holder')
      expect(await store.webhooks.get(d.id)).toMatchObject({ status: 'pending', leaseOwner: null, leaseUntil: 0 })
      // Released: claimable again at once (a restart gives its work back).
      expect(await second.webhooks.claim('other', now + 100, 1000)).toMatchObject({ id: d.id, leaseOwner: 'other', attempts: 2 })
      expect(await second.webhooks.finish(d.id, 'other', 'done', now + 200)).toBe(true)
    })

    it('deleteBot returns the bodies still held by the bot\'s deliveries, and only its own; the deliveries go with it', async () => {
      const fx = await seed(store)
      const mine = (over: Partial<NewWebhookDelivery>) => delivery({ integrationId: fx.a.id, ...over })
      const held = await enqueue(store, mine({ blobName: 'held-1' }))
      const processed = await enqueue(store, mine({ blobName: 'held-2' }))
      const other = await enqueue(store, delivery({ integrationId: otherIntegrationId, blobName: 'other-bot' }))
      const now = later()
      for (let d; (d = await store.webhooks.claim('w', now, 1000));) if (d.id === processed.delivery.id) await store.webhooks.finish(d.id, 'w', 'done', now)
      expect(await store.deleteBot(fx.bot.id)).toEqual({ webhookBlobNames: [held.delivery.blobName] })
      expect(await store.webhooks.get(held.delivery.id)).toBeUndefined()
      expect(await store.webhooks.get(processed.delivery.id)).toBeUndefined()
      expect(await store.webhooks.get(other.delivery.id)).toMatchObject({ blobName: 'other-bot' })
      expect(await store.deleteBot(fx.bot.id)).toBeUndefined()
    })

    it('enqueue on the integration of a deleted bot answers undefined and queues nothing, with or without an idempotency key', async () => {
      const fx = await seed(store)
      const keyed = await enqueue(store, delivery({ integrationId: fx.a.id, idempotencyKey: 'before-delete' }))
      await store.deleteBot(fx.bot.id)
      for (const idempotencyKey of [null, 'fresh-key', 'before-delete']) {
        const d = delivery({ integrationId: fx.a.id, idempotencyKey, blobName: 'late' })
        expect(await second.webhooks.enqueue(d)).toBeUndefined()
        expect(await store.webhooks.get(d.id)).toBeUndefined()
      }
      expect(await store.webhooks.get(keyed.delivery.id)).toBeUndefined()
      expect(await store.webhooks.findByIdempotencyKey(fx.a.id, 'before-delete')).toBeUndefined()
    })

    it('enqueue racing the deletion of its bot: queued and returned by deleteBot, or undefined; never an error, never left behind', async () => {
      for (let round = 0; round < 10; round++) {
        const fx = await seed(store)
        const names = Array.from({ length: 20 }, (_, i) => `race-${round}-${i}`)
        const queued = names.map((blobName, i) => second.webhooks.enqueue(delivery({ integrationId: fx.a.id, blobName, idempotencyKey: i % 2 ? null : `k${i % 4}` })))
        const deleted = store.deleteBot(fx.bot.id)
        const results = await Promise.all(queued)
        const returned = (await deleted)!.webhookBlobNames
        // Every body of a delivery that was queued (created) is among those deleteBot returned.
        const created = results.flatMap((r, i) => (r?.created ? [names[i]!] : []))
        expect(returned.sort()).toEqual([...created].sort())
        for (const r of results) if (r) expect(await store.webhooks.get(r.delivery.id)).toBeUndefined()
      }
    })
  })
}
