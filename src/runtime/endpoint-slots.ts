/**
 * Concurrency slots and a circuit breaker per outbound endpoint (a remote bot, an integration), so that one
 * tenant's slow or dead endpoint costs the other tenants nothing. The rules:
 *
 * - Slots: at most `perEndpoint` requests (or conversations being delivered) of one endpoint at once, and
 *   `total` of all endpoints together; but an endpoint with nothing in flight is always admitted, even above
 *   `total`, so the shared cap can slow a busy endpoint's extra parallelism and never stop another endpoint.
 *   When slots free up, the waiting endpoint with the fewest in flight goes first (not first come, first
 *   served: one endpoint's long queue does not stand in front of another's first request).
 * - Queues: a waiter of a durable delivery waits as long as it takes (its work is in the database anyway); a
 *   `bounded` waiter (someone waits for the answer: a public webhook relay, an action) is refused at once with
 *   EndpointBusy when `queuePerEndpoint` waiters of that endpoint wait already.
 * - Breaker: `breakerFailures` consecutive failures (no answer in time, no connection) open the endpoint: for
 *   `breakerCooldownMs` nothing is sent to it (EndpointPaused; its waiters are refused at once). Then one
 *   request is let through (the probe, half-open; others are refused until it ends): an answer closes the
 *   breaker, a failure opens it again for another cool-down. Any answer (whatever its status) is a success here: the endpoint is alive.
 *   `report` hears one `open` when it opens and one `closed` when it closes (not each failed probe).
 */

import { errors, type ApiError } from '../lib/errors.js'

export interface EndpointSlotSettings {
  /** Requests (remote-bot conversations) of one endpoint in flight at once, per instance. */
  perEndpoint: number
  /** Requests in flight at once, all endpoints together (an endpoint with none in flight still gets one). */
  total: number
  /** Waiters of one endpoint that someone waits for (webhook relays, actions); more are refused (EndpointBusy). */
  queuePerEndpoint: number
  /** Consecutive failures (timeouts, connection errors) that open an endpoint's breaker; 0 = never. */
  breakerFailures: number
  /** How long an open breaker refuses before it lets one probe through. */
  breakerCooldownMs: number
}

/** The endpoint's breaker is open: nothing was sent. `retryAfterMs`: when a request may go through again. */
export class EndpointPaused extends Error {
  constructor(readonly key: string, readonly retryAfterMs: number) {
    super(`requests to it are paused after repeated timeouts or connection failures; retry in ${Math.ceil(retryAfterMs / 1000)} s`)
  }
}

/** The endpoint's slots and its queue are full: nothing was sent. */
export class EndpointBusy extends Error {
  constructor(readonly key: string, readonly retryAfterMs: number) {
    super(`too many requests to it are waiting; retry in ${Math.ceil(retryAfterMs / 1000)} s`)
  }
}

/** The API error of a request the slots refused (busy: 429, paused: 503, both with Retry-After); undefined for any other error. */
export function refusedError(err: unknown, what: string): ApiError | undefined {
  if (!(err instanceof EndpointBusy) && !(err instanceof EndpointPaused)) return undefined
  return errors.endpointRefused(err instanceof EndpointBusy, `${what}: ${err.message}`, Math.max(1, Math.ceil(err.retryAfterMs / 1000)))
}

export type BreakerChange = 'open' | 'closed'
export type Outcome = 'answered' | 'failed' | 'none'
type Release = () => void

interface Waiter {
  bounded: boolean
  grant: (release: Release) => void
  refuse: (err: Error) => void
}

interface Endpoint {
  inFlight: number
  waiting: Waiter[]
  failures: number
  /** Set while the breaker is open (a request is let through as a probe once it has passed). */
  openUntil: number | undefined
  probing: boolean
  report: ((change: BreakerChange) => void) | undefined
}

/** How long a caller refused while the probe is on its way is told to wait. */
const PROBE_RETRY_MS = 1_000

export class EndpointSlots {
  private readonly endpoints = new Map<string, Endpoint>()
  private used = 0
  /** Counters for /metrics and tests. */
  readonly counts = { opened: 0, closed: 0, refusedBusy: 0, refusedPaused: 0 }

  constructor(
    readonly settings: EndpointSlotSettings,
    private readonly clock: () => number = Date.now,
  ) {}

  private entry(key: string): Endpoint {
    let e = this.endpoints.get(key)
    if (!e) {
      e = { inFlight: 0, waiting: [], failures: 0, openUntil: undefined, probing: false, report: undefined }
      this.endpoints.set(key, e)
    }
    return e
  }

  /** Forgets an endpoint with nothing to remember (no slot, waiter, failure or open breaker). */
  private tidy(key: string, e: Endpoint): void {
    if (e.inFlight === 0 && e.waiting.length === 0 && e.failures === 0 && e.openUntil === undefined && !e.probing) this.endpoints.delete(key)
  }

  private pausedFor(e: Endpoint): number {
    return e.openUntil === undefined ? 0 : Math.max(0, e.openUntil - this.clock())
  }

  /** How long a new request to an open endpoint must wait: the rest of the cool-down, or the probe's answer; 0 = go. */
  private refusal(e: Endpoint): number {
    if (e.openUntil === undefined) return 0
    const paused = this.pausedFor(e)
    return paused > 0 ? paused : e.probing ? PROBE_RETRY_MS : 0
  }

  private canGrant(e: Endpoint): boolean {
    return e.inFlight < this.settings.perEndpoint && (this.used < this.settings.total || e.inFlight === 0)
  }

  private take(key: string, e: Endpoint): Release {
    e.inFlight++
    this.used++
    let released = false
    return () => {
      if (released) return
      released = true
      e.inFlight--
      this.used--
      this.pump()
      this.tidy(key, e)
    }
  }

  /** Hands free slots to waiters: the grantable endpoint with the fewest in flight first. */
  private pump(): void {
    for (;;) {
      let best: [string, Endpoint] | undefined
      for (const [key, e] of this.endpoints) {
        if (e.waiting.length > 0 && this.canGrant(e) && (!best || e.inFlight < best[1].inFlight)) best = [key, e]
      }
      if (!best) return
      best[1].waiting.shift()!.grant(this.take(best[0], best[1]))
    }
  }

  /**
   * A slot of `key`, released by the returned function. Rejects with EndpointPaused while its breaker is open
   * (before the probe's time), and, when `bounded`, with EndpointBusy when its queue is full.
   */
  acquire(key: string, options: { bounded?: boolean } = {}): Promise<Release> {
    const e = this.entry(key)
    const paused = this.refusal(e)
    if (paused > 0) {
      this.counts.refusedPaused++
      this.tidy(key, e)
      return Promise.reject(new EndpointPaused(key, paused))
    }
    if (e.waiting.length === 0 && this.canGrant(e)) return Promise.resolve(this.take(key, e))
    const bounded = options.bounded ?? false
    if (bounded && e.waiting.filter((w) => w.bounded).length >= this.settings.queuePerEndpoint) {
      this.counts.refusedBusy++
      this.tidy(key, e)
      return Promise.reject(new EndpointBusy(key, PROBE_RETRY_MS))
    }
    return new Promise((grant, refuse) => e.waiting.push({ bounded, grant, refuse }))
  }

  /**
   * Called right before one request to `key`: throws EndpointPaused while its breaker is open (or while the
   * probe is on its way); returns the function that records the request's outcome (call it once).
   * `report` hears the breaker's changes (the latest caller's function is kept).
   */
  begin(key: string, report?: (change: BreakerChange) => void): (outcome: Outcome) => void {
    const e = this.entry(key)
    if (report) e.report = report
    let probe = false
    if (e.openUntil !== undefined) {
      const paused = this.refusal(e)
      if (paused > 0) {
        this.counts.refusedPaused++
        this.tidy(key, e)
        throw new EndpointPaused(key, paused)
      }
      e.probing = probe = true
    }
    let recorded = false
    return (outcome) => {
      if (recorded) return
      recorded = true
      if (probe) e.probing = false
      if (outcome === 'answered') {
        e.failures = 0
        if (e.openUntil !== undefined) {
          e.openUntil = undefined
          this.counts.closed++
          e.report?.('closed')
        }
      } else if (outcome === 'failed') {
        if (probe) e.openUntil = this.clock() + this.settings.breakerCooldownMs
        else if (e.openUntil === undefined) {
          e.failures++
          if (this.settings.breakerFailures > 0 && e.failures >= this.settings.breakerFailures) this.trip(key, e)
        }
      }
      this.tidy(key, e)
    }
  }

  private trip(key: string, e: Endpoint): void {
    e.openUntil = this.clock() + this.settings.breakerCooldownMs
    this.counts.opened++
    e.report?.('open')
    const refused = e.waiting.splice(0)
    this.counts.refusedPaused += refused.length
    for (const w of refused) w.refuse(new EndpointPaused(key, this.settings.breakerCooldownMs))
  }

  /** One endpoint as the rules see it (tests, logs). */
  stats(key: string): { inFlight: number; waiting: number; failures: number; state: 'closed' | 'open' | 'half-open' } {
    const e = this.endpoints.get(key)
    if (!e) return { inFlight: 0, waiting: 0, failures: 0, state: 'closed' }
    const state = e.openUntil === undefined ? 'closed' : this.pausedFor(e) > 0 ? 'open' : 'half-open'
    return { inFlight: e.inFlight, waiting: e.waiting.length, failures: e.failures, state }
  }

  /** Slots in use, all endpoints. */
  get inFlight(): number {
    return this.used
  }

  /** Waiters, all endpoints. */
  get waiting(): number {
    let n = 0
    for (const e of this.endpoints.values()) n += e.waiting.length
    return n
  }

  /** Endpoints whose breaker is open or half-open. */
  get open(): number {
    let n = 0
    for (const e of this.endpoints.values()) if (e.openUntil !== undefined) n++
    return n
  }
}
