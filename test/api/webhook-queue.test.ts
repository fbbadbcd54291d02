/**
 * The webhook delivery queue (src/store/kysely/kysely-webhook-store.ts) on each engine: idempotent
 * enqueue, lease-based claims (concurrent claimers — on PostgreSQL from separate connection pools,
 * as separate instances would — get each delivery exactly once), expired leases taken over, and
 * only the lease holder may finish a delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BotService } from '../../src/domain/bot-service.js'
import { uuidv7 } from '../../src/lib/ids.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { createPostgresStore } from '../../src/store/postgres.js'
import { startParley, type Harness } from '../helpers/harness.js'

describe('webhook delivery queue', () => {
  let h: Harness
  let other: KyselyStore
  let integrationId: string
  let t = 1_000_000

  const delivery = (key: string | null = null) => ({
    id: uuidv7(), integrationId, idempotencyKey: key, blobName: null, size: 2, contentType: 'application/json', createdAt: ++t,
  })

  beforeAll(async () => {
    // No workers in the app: this test is the only claimer.
    h = await startParley({ config: { webhook: { maxBodyBytes: 1024, inlineBodyBytes: 1024, toleranceSeconds: 300, workers: 0, pollMs: 1000 } } })
    // A second "instance": its own pool on PostgreSQL; the same file through the same store on SQLite (one writer).
    other = h.databaseUrl ? await createPostgresStore({ url: h.databaseUrl, poolSize: 3 }) : h.store
    const { integrations } = await new BotService(h.store).createBot(h.credentials.workspaceId, { integrations: { webhook: { enabled: true } } })
    integrationId = integrations[0]!.id
  })
  afterAll(async () => {
    if (other && other !== h.store) await other.close()
    await h?.close()
  })

  it('returns the first delivery for a repeated idempotency key', async () => {
    const first = await h.store.webhooks.enqueue(delivery('key-1'))
    const again = await h.store.webhooks.enqueue(delivery('key-1'))
    expect(first.created).toBe(true)
    expect(again).toEqual({ delivery: first.delivery, created: false })
    // Without a key, every delivery is new.
    expect((await h.store.webhooks.enqueue(delivery())).created).toBe(true)
    expect((await h.store.webhooks.enqueue(delivery())).created).toBe(true)
    // Drain what this test queued.
    for (let d; (d = await h.store.webhooks.claim('drain', 10 ** 15, 1));) expect(await h.store.webhooks.finish(d.id, 'drain', 'done', 10 ** 15)).toBe(true)
  })

  it('gives each pending delivery to exactly one of many concurrent claimers', async () => {
    const ids = new Set<string>()
    for (let i = 0; i < 40; i++) ids.add((await h.store.webhooks.enqueue(delivery())).delivery.id)
    const now = 2 * 10 ** 15 // later than the drain's leases
    const claimed: string[] = []
    await Promise.all(Array.from({ length: 8 }, (_, w) => (async () => {
      const store = w % 2 === 0 ? h.store : other
      for (;;) {
        const d = await store.webhooks.claim(`worker-${w}`, now, 60_000)
        if (!d) return
        expect(d.leaseOwner).toBe(`worker-${w}`)
        claimed.push(d.id)
        expect(await store.webhooks.finish(d.id, `worker-${w}`, 'done', now)).toBe(true)
      }
    })()))
    expect(claimed.length).toBe(ids.size)
    expect(new Set(claimed)).toEqual(ids)
  })

  it('lets another worker take over an expired lease; only the holder finishes', async () => {
    const { delivery: d } = await h.store.webhooks.enqueue(delivery())
    const now = 3 * 10 ** 15
    const a = await h.store.webhooks.claim('a', now, 1000)
    expect(a?.id).toBe(d.id)
    expect(await other.webhooks.claim('b', now + 999, 1000)).toBeUndefined()
    const b = await other.webhooks.claim('b', now + 1000, 1000)
    expect(b).toMatchObject({ id: d.id, leaseOwner: 'b', attempts: 2 })
    expect(await h.store.webhooks.finish(d.id, 'a', 'done', now + 1500)).toBe(false)
    expect(await other.webhooks.finish(d.id, 'b', 'done', now + 1500)).toBe(true)
    expect(await h.store.webhooks.get(d.id)).toMatchObject({ status: 'done', processedAt: now + 1500, blobName: null })
    expect(await h.store.webhooks.claim('c', now + 10 ** 9, 1000)).toBeUndefined()
  })
})
