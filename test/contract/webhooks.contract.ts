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
      const first = await store.webhooks.enqueue(delivery({ idempotencyKey: 'key-1' }))
      expect(first.created).toBe(true)
      expect(first.delivery).toMatchObject({ integrationId, idempotencyKey: 'key-1', status: 'pending', attempts: 0, leaseOwner: null, leaseUntil: 0, processedAt: null })
      const again = await second.webhooks.enqueue(delivery({ idempotencyKey: 'key-1' }))
      expect(again).toEqual({ delivery: first.delivery, created: false })
      expect(await store.webhooks.findByIdempotencyKey(integrationId, 'key-1')).toEqual(first.delivery)
      expect((await store.webhooks.enqueue(delivery({ integrationId: otherIntegrationId, idempotencyKey: 'key-1' }))).created).toBe(true)
      expect((await store.webhooks.enqueue(delivery())).created).toBe(true)
      expect((await store.webhooks.enqueue(delivery())).created).toBe(true)
      expect(await store.webhooks.findByIdempotencyKey(integrationId, 'unknown')).toBeUndefined()
      expect(await store.webhooks.get(randomUUID())).toBeUndefined()
      await drain(later())
    })

    it('claims the oldest pending delivery first', async () => {
      const a = await store.webhooks.enqueue(delivery())
      const b = await store.webhooks.enqueue(delivery())
      const now = later()
      expect((await store.webhooks.claim('w', now, 1000))?.id).toBe(a.delivery.id)
      expect((await store.webhooks.claim('w', now, 1000))?.id).toBe(b.delivery.id)
      expect(await store.webhooks.claim('w', now, 1000)).toBeUndefined()
      await drain(now + 1000)
    })

    it('gives each pending delivery to exactly one of many concurrent claimers', async () => {
      const ids = new Set<string>()
      for (let i = 0; i < 40; i++) ids.add((await store.webhooks.enqueue(delivery())).delivery.id)
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
      const { delivery: d } = await store.webhooks.enqueue(delivery({ blobName: 'blob-x' }))
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
      const { delivery: d } = await store.webhooks.enqueue(delivery())
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

    it('blobNamesOfBot lists the bodies still held by the bot\'s deliveries, and only its own', async () => {
      const held = await store.webhooks.enqueue(delivery({ blobName: 'held-1' }))
      const processed = await store.webhooks.enqueue(delivery({ blobName: 'held-2' }))
      await store.webhooks.enqueue(delivery({ integrationId: otherIntegrationId, blobName: 'other-bot' }))
      const now = later()
      for (let d; (d = await store.webhooks.claim('w', now, 1000));) if (d.id === processed.delivery.id) await store.webhooks.finish(d.id, 'w', 'done', now)
      expect(await store.webhooks.blobNamesOfBot(botId)).toEqual([held.delivery.blobName])
      expect(await store.webhooks.blobNamesOfBot(randomUUID())).toEqual([])
    })
  })
}
