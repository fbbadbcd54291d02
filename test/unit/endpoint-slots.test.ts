/**
 * The rules of src/runtime/endpoint-slots.ts: slots per endpoint and in all (an idle endpoint always gets one),
 * the fewest-in-flight endpoint served first, bounded queues, and the circuit breaker (open after N consecutive
 * failures, refuse during the cool-down, one probe, closed by an answer). A fake clock: no waiting on time.
 */
import { describe, expect, it } from 'vitest'
import { EndpointBusy, EndpointPaused, EndpointSlots, refusedError, type BreakerChange, type EndpointSlotSettings } from '../../src/runtime/endpoint-slots.js'

const SETTINGS: EndpointSlotSettings = { perEndpoint: 2, total: 4, queuePerEndpoint: 2, breakerFailures: 3, breakerCooldownMs: 1_000 }

function slotsAt(settings: Partial<EndpointSlotSettings> = {}) {
  let now = 0
  const slots = new EndpointSlots({ ...SETTINGS, ...settings }, () => now)
  return { slots, advance: (ms: number) => (now += ms) }
}

/** Whether a promise settled by the next turn of the event loop. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false
  p.then(() => (done = true), () => (done = true))
  await new Promise((r) => setImmediate(r))
  return done
}

describe('endpoint slots', () => {
  it('bounds one endpoint to its own slots; others are not held up by its waiters', async () => {
    const { slots } = slotsAt()
    await slots.acquire('dead')
    await slots.acquire('dead')
    const third = slots.acquire('dead')
    expect(await settled(third)).toBe(false)
    expect(slots.stats('dead')).toMatchObject({ inFlight: 2, waiting: 1 })
    // Another endpoint is admitted at once.
    expect(await settled(slots.acquire('healthy'))).toBe(true)
    expect(slots.stats('healthy').inFlight).toBe(1)
  })

  it('an endpoint with nothing in flight gets a slot even when all the shared ones are taken', async () => {
    const { slots } = slotsAt({ total: 4 })
    for (const key of ['a', 'a', 'b', 'b']) await slots.acquire(key)
    expect(slots.inFlight).toBe(4)
    // c has none: admitted above the cap; its second waits.
    expect(await settled(slots.acquire('c'))).toBe(true)
    expect(await settled(slots.acquire('c'))).toBe(false)
    expect(slots.inFlight).toBe(5)
  })

  it('a freed shared slot goes to the waiting endpoint with the fewest in flight, not the longest queue', async () => {
    const { slots } = slotsAt({ perEndpoint: 3, total: 4 })
    const a = [await slots.acquire('a'), await slots.acquire('a'), await slots.acquire('a')]
    const c = await slots.acquire('c')
    const aWaits = slots.acquire('a') // a is at its own limit
    const cWaits = slots.acquire('c') // the shared cap is reached (4)
    expect([await settled(aWaits), await settled(cWaits)]).toEqual([false, false])
    a[0]!()
    // a went to 2, c has 1: c's waiter is served first.
    expect([await settled(aWaits), await settled(cWaits)]).toEqual([false, true])
    c()
    expect(await settled(aWaits)).toBe(true)
  })

  it('a bounded waiter is refused at once (EndpointBusy) when its endpoint\'s queue is full; a durable one still waits', async () => {
    const { slots } = slotsAt({ queuePerEndpoint: 2 })
    await slots.acquire('x')
    await slots.acquire('x')
    const queued = [slots.acquire('x', { bounded: true }), slots.acquire('x', { bounded: true })]
    await expect(slots.acquire('x', { bounded: true })).rejects.toBeInstanceOf(EndpointBusy)
    expect(await settled(slots.acquire('x'))).toBe(false)
    expect(slots.counts.refusedBusy).toBe(1)
    expect(await Promise.all(queued.map(settled))).toEqual([false, false])
  })

  it('opens after N consecutive failures (an answer in between resets the count), refuses and drops its waiters, then lets one probe through', async () => {
    const { slots, advance } = slotsAt({ breakerFailures: 3, breakerCooldownMs: 1_000 })
    const changes: BreakerChange[] = []
    const report = (c: BreakerChange) => changes.push(c)
    const release = [await slots.acquire('x'), await slots.acquire('x')]
    const waiter = slots.acquire('x')
    slots.begin('x', report)('failed')
    slots.begin('x', report)('failed')
    slots.begin('x', report)('answered')
    slots.begin('x', report)('failed')
    slots.begin('x', report)('failed')
    expect(slots.stats('x')).toMatchObject({ failures: 2, state: 'closed' })
    slots.begin('x', report)('failed')
    expect(slots.stats('x').state).toBe('open')
    expect(changes).toEqual(['open'])
    await expect(waiter).rejects.toBeInstanceOf(EndpointPaused)
    expect(() => slots.begin('x')).toThrow(EndpointPaused)
    await expect(slots.acquire('x')).rejects.toBeInstanceOf(EndpointPaused)
    release.forEach((r) => r())
    advance(1_000)
    expect(slots.stats('x').state).toBe('half-open')
    // One probe; everything else is refused until it ends.
    const probe = slots.begin('x', report)
    expect(() => slots.begin('x')).toThrow(EndpointPaused)
    await expect(slots.acquire('x')).rejects.toBeInstanceOf(EndpointPaused)
    probe('failed')
    expect(slots.stats('x').state).toBe('open')
    expect(changes).toEqual(['open']) // a failed probe is not a new line
    advance(1_000)
    slots.begin('x', report)('answered')
    expect(slots.stats('x')).toMatchObject({ state: 'closed', failures: 0 })
    expect(changes).toEqual(['open', 'closed'])
    expect(slots.counts).toMatchObject({ opened: 1, closed: 1 })
    expect(await settled(slots.acquire('x'))).toBe(true)
  })

  it('a probe that ends without an outcome (stopped) lets the next request probe; breakerFailures 0 never opens', async () => {
    const { slots, advance } = slotsAt({ breakerFailures: 1 })
    slots.begin('x')('failed')
    advance(1_000)
    slots.begin('x')('none')
    const next = slots.begin('x')
    next('answered')
    expect(slots.stats('x').state).toBe('closed')
    const never = slotsAt({ breakerFailures: 0 }).slots
    for (let i = 0; i < 100; i++) never.begin('y')('failed')
    expect(never.stats('y').state).toBe('closed')
  })

  it('forgets endpoints with nothing to remember; maps refusals to 429 / 503 with Retry-After', async () => {
    const { slots } = slotsAt()
    const release = await slots.acquire('x')
    slots.begin('x')('answered')
    release()
    expect(slots.stats('x')).toEqual({ inFlight: 0, waiting: 0, failures: 0, state: 'closed' })
    expect((slots as unknown as { endpoints: Map<string, unknown> }).endpoints.size).toBe(0)
    const busy = refusedError(new EndpointBusy('x', 1_000), 'Integration i was not called')!
    expect([busy.status, busy.type, busy.retryAfterSeconds]).toEqual([429, 'RateLimited', 1])
    const paused = refusedError(new EndpointPaused('x', 29_001), 'Integration i was not called')!
    expect([paused.status, paused.type, paused.retryAfterSeconds]).toEqual([503, 'ServiceUnavailable', 30])
    expect(paused.message).toMatch(/^Integration i was not called: requests to it are paused/)
    expect(refusedError(new Error('x'), 'y')).toBeUndefined()
  })
})
