import { setMaxListeners } from 'node:events'
import http from 'node:http'
import https from 'node:https'
import { uuidv7 } from '../lib/ids.js'
import { OutboundError, OutboundPolicy, answeredStatus, outboundFailure } from '../lib/outbound-policy.js'
import { SIGNATURE_HEADER, signatureHeader } from '../lib/signature.js'
import type { BotLogRow, BotRow, Store } from '../store/store.js'
import type { ConversationViews, RemoteEvent } from './remote-events.js'
import type { MetricsRegistry } from '../lib/metrics.js'
import { EndpointPaused, EndpointSlots, type BreakerChange, type EndpointSlotSettings } from './endpoint-slots.js'

/**
 * Remote bots: bots whose `url` is set (an @botpress/sdk program served elsewhere) get their events
 * as HTTP POSTs in the protocol the SDK's bot server reads (headers x-bot-id, x-bot-user-id,
 * x-bp-operation, x-bp-type, x-bp-configuration; body `{ event }`), signed with the bot's
 * signingSecret (x-parley-signature, src/lib/signature.ts). The bot answers through the Runtime API.
 *
 * The bot runtime schedules (one conversation at a time, in order, conversations in parallel, the
 * cursor moved after each 2xx); this module only runs a delivery: retries with backoff, then a
 * failure in the bot's logs. Every request goes through the endpoint's slots and circuit breaker
 * (src/runtime/endpoint-slots.ts; an endpoint is a bot, key its id, or an integration, key
 * `integration:<id>`), so a slow or dead endpoint holds its own slots and never another's, and one that
 * keeps failing is paused: a durable delivery to it waits (DeliveryDeferred), a caller is refused at once.
 */

export interface RemoteBotSettings {
  /** Wall time of one POST (connect to last byte of the answer). */
  timeoutMs: number
  /** POSTs per event before it is recorded as failed (1 = no retry). */
  attempts: number
  /** Wait before the first retry; doubled for each next one, capped at maxBackoffMs. */
  backoffMs: number
  maxBackoffMs: number
}

/** Largest answer read from a remote bot (an action's output): the Runtime API's 1 MB. */
export const MAX_ANSWER_BYTES = 1024 * 1024

export type RemoteOperation = 'event_received' | 'register' | 'unregister' | 'ping' | 'action_triggered'

export interface RemoteAnswer { status: number; body: string; headers?: Record<string, string> }

/** The run was stopped (the instance shuts down): nothing is recorded, the event is delivered again after the restart. */
export class DeliveryStopped extends Error {
  constructor() {
    super('The instance is stopping')
  }
}

/**
 * The endpoint is paused (its circuit is open): the durable delivery was not attempted and stays where it is (the
 * conversation's cursor, the event's or the outbox's queue), to be sent once the endpoint answers again.
 */
export class DeliveryDeferred extends DeliveryStopped {
  constructor(readonly retryAfterMs: number) {
    super()
    this.message = 'The endpoint is paused after repeated failures; the delivery waits'
  }
}

/** The key of a bot's slots and breaker: its id and url (a new url starts with a closed breaker, on every instance). */
export const botEndpoint = (bot: Pick<BotRow, 'id' | 'url'>) => `bot:${bot.id}:${bot.url}`
/** The key of an integration's slots and breaker (the definition's id and url). */
export const integrationEndpoint = (definition: { id: string; url: string | null }) => `integration:${definition.id}:${definition.url}`

/** The log lines of a breaker's changes (no answer of the endpoint is quoted). */
export function breakerLine(change: BreakerChange, what: string, settings: EndpointSlotSettings): { level: string; message: string } {
  return change === 'open'
    ? { level: 'warn', message: `Requests to ${what} are paused for ${settings.breakerCooldownMs / 1000} s after ${settings.breakerFailures} consecutive failures (no answer in time, or no connection); `
      + 'deliveries wait and go out in order once a probe request is answered' }
    : { level: 'info', message: `Requests to ${what} resumed: it answered again` }
}

/** Where an endpoint's breaker changes are told (its logs: one line when it opens, one when it closes). */
export type BreakerReport = (change: BreakerChange) => void

// ---- delivery ----

export class RemoteBots {
  readonly slots: EndpointSlots
  /** Events this instance delivered (answered 2xx), attempts that failed, events given up (logged as failed). */
  private delivered = 0
  private retried = 0
  private failed = 0
  private readonly stopping = new AbortController()
  private readonly clock: () => number
  private viewsOf: ConversationViews | undefined
  /** Where requests may connect (config.outbound): checked on IP-literal hosts in send, on resolved names by the agents' lookup. */
  private readonly outbound: OutboundPolicy
  private readonly agents: { 'http:': http.Agent; 'https:': https.Agent }

  constructor(
    private readonly store: Store,
    readonly settings: RemoteBotSettings,
    slotSettings: EndpointSlotSettings,
    options: { clock?: () => number; outbound?: OutboundPolicy } = {},
  ) {
    this.outbound = options.outbound ?? new OutboundPolicy()
    // The checked resolver on the agents: every new connection is made to an address the policy allows (at connect
    // time, so a name that resolves elsewhere later is checked again). Answers are never followed (no redirects).
    const { lookup } = this.outbound
    this.agents = { 'http:': new http.Agent({ keepAlive: true, lookup }), 'https:': new https.Agent({ keepAlive: true, lookup }) }
    this.clock = options.clock ?? Date.now
    this.slots = new EndpointSlots(slotSettings, this.clock)
    // One listener per request or wait in progress (bounded by the slot settings).
    setMaxListeners(0, this.stopping.signal)
  }

  /** The domain that shows messages, users and conversations (set once by the composition root). */
  useViews(views: ConversationViews): void {
    this.viewsOf = views
  }

  get views(): ConversationViews {
    if (!this.viewsOf) throw new Error('RemoteBots.useViews was not called')
    return this.viewsOf
  }

  /** Ends waits and requests in progress: their events stay where they were, for the next start. */
  stop(): void {
    this.stopping.abort()
    this.agents['http:'].destroy()
    this.agents['https:'].destroy()
  }

  /** The longest one event can take (every attempt timing out, every backoff), plus a margin: a conversation's lease. */
  leaseMs(): number {
    const { attempts, timeoutMs } = this.settings
    let total = attempts * timeoutMs
    for (let i = 1; i < attempts; i++) total += this.backoff(i)
    return total + 10_000
  }

  /** The wait before retry number `retry` (1-based): backoffMs doubled each time, capped at maxBackoffMs. */
  backoff(retry: number): number {
    return Math.min(this.settings.maxBackoffMs, this.settings.backoffMs * 2 ** (retry - 1))
  }

  /**
   * A slot of a durable delivery to `key` (a bot's id, integrationEndpoint(id)), released by the returned function:
   * waits its turn; rejects with DeliveryDeferred while the endpoint is paused.
   */
  async admit(key: string): Promise<() => void> {
    try {
      return await this.slots.acquire(key)
    } catch (err) {
      throw err instanceof EndpointPaused ? new DeliveryDeferred(err.retryAfterMs) : err
    }
  }

  /**
   * One POST to `key`'s endpoint under a slot already held (admit): refused with DeliveryDeferred while the endpoint
   * is paused; its outcome counts for the endpoint's breaker (any answer closes it; a timeout or a network error
   * counts toward opening it). `report` is told when the breaker opens or closes.
   */
  async postTo(key: string, report: BreakerReport, url: string, headers: Record<string, string>, body: string): Promise<RemoteAnswer> {
    let settle: (outcome: 'answered' | 'failed' | 'none') => void
    try {
      settle = this.slots.begin(key, report)
    } catch (err) {
      throw err instanceof EndpointPaused ? new DeliveryDeferred(err.retryAfterMs) : err
    }
    try {
      const answer = await this.post(url, headers, body)
      settle('answered')
      return answer
    } catch (err) {
      settle(err instanceof DeliveryStopped ? 'none' : 'failed')
      throw err
    }
  }

  /**
   * One request someone waits for (an action, a webhook relay, a ping…) to `key`'s endpoint: a slot (its queue is
   * bounded) and the POST. Rejects with EndpointBusy (queue full) or EndpointPaused (circuit open) without sending.
   */
  async call(key: string, report: BreakerReport, url: string, headers: Record<string, string>, body: string): Promise<RemoteAnswer> {
    const release = await this.slots.acquire(key, { bounded: true })
    try {
      try {
        return await this.postTo(key, report, url, headers, body)
      } catch (err) {
        throw err instanceof DeliveryDeferred ? new EndpointPaused(key, err.retryAfterMs) : err
      }
    } finally {
      release()
    }
  }

  /** The headers and signed body of one request, in the SDK's bot-server protocol. */
  request(bot: BotRow, operation: RemoteOperation, type: string, body: unknown, eventId?: string): { headers: Record<string, string>; body: string } {
    const raw = JSON.stringify(body)
    return {
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-bot-id': bot.id,
        // On Parley a bot's messages have userId = the bot's id.
        'x-bot-user-id': bot.id,
        'x-bp-operation': operation,
        'x-bp-type': type,
        // The bot's configuration (Parley bots have none: {}); the SDK requires the header.
        'x-bp-configuration': Buffer.from('{}').toString('base64'),
        [SIGNATURE_HEADER]: signatureHeader(bot.signingSecret, raw, Math.floor(this.clock() / 1000)),
        ...(eventId !== undefined && { 'x-parley-event-id': eventId }),
      },
    }
  }

  /** One POST; rejects on a network error or the timeout, resolves with any status. */
  post(url: string, headers: Record<string, string>, body: string, timeoutMs = this.settings.timeoutMs): Promise<RemoteAnswer> {
    return this.send('POST', url, headers, body, timeoutMs)
  }

  /**
   * One request (the answer's headers included); rejects on a network error, the timeout or a target the outbound
   * policy refuses (OutboundRefused, before connecting), resolves with any status (a redirect is not followed).
   * Tell a rejection with outboundFailure(err) and an answer with its status: never with the target's body.
   */
  send(method: string, url: string, headers: Record<string, string>, body: string, timeoutMs = this.settings.timeoutMs): Promise<RemoteAnswer> {
    return new Promise((resolve, reject) => {
      if (this.stopping.signal.aborted) return reject(new DeliveryStopped())
      const target = new URL(url)
      try {
        // An IP-literal host is connected to without a lookup: checked here (a name is checked by the agent's lookup).
        this.outbound.checkHost(target.hostname)
      } catch (err) {
        return reject(err)
      }
      const transport = target.protocol === 'https:' ? https : http
      let settled = false
      const done = (fn: () => void) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.stopping.signal.removeEventListener('abort', onStop)
        fn()
      }
      const req = transport.request(target, {
        method,
        agent: this.agents[target.protocol as 'http:' | 'https:'],
        lookup: this.outbound.lookup,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      }, (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk)
          else {
            req.destroy()
            done(() => reject(new OutboundError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`)))
          }
        })
        res.on('end', () => done(() => resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v ?? ''])),
        })))
        res.on('error', (err) => done(() => reject(err)))
      })
      const timer = setTimeout(() => {
        req.destroy()
        done(() => reject(new OutboundError(`timed out (no answer within ${timeoutMs} ms)`)))
      }, timeoutMs)
      const onStop = () => {
        req.destroy()
        done(() => reject(new DeliveryStopped()))
      }
      this.stopping.signal.addEventListener('abort', onStop, { once: true })
      req.on('error', (err) => done(() => reject(err)))
      req.end(body)
    })
  }

  /** Waits `ms`; rejects with DeliveryStopped when the instance stops. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stopping.signal.aborted) return reject(new DeliveryStopped())
      const onStop = () => {
        clearTimeout(timer)
        reject(new DeliveryStopped())
      }
      const timer = setTimeout(() => {
        this.stopping.signal.removeEventListener('abort', onStop)
        resolve()
      }, ms)
      this.stopping.signal.addEventListener('abort', onStop, { once: true })
    })
  }

  /**
   * Delivers one event (`event_received`) with retries. Resolves with nothing to log when the bot
   * answered 2xx, else with the failure's log line (status and reason of the last attempt); rejects
   * only with DeliveryStopped. The signature is made again for each attempt (fresh timestamp).
   */
  async deliver(bot: BotRow, event: RemoteEvent, conversationId: string | null): Promise<BotLogRow[]> {
    const url = bot.url
    if (url === null) return []
    const key = botEndpoint(bot)
    const report = this.botReport(bot)
    let reason = ''
    for (let attempt = 1; attempt <= this.settings.attempts; attempt++) {
      if (attempt > 1) await this.wait(this.backoff(attempt - 1))
      const { headers, body } = this.request(bot, 'event_received', event.type, { event }, event.id)
      headers['x-parley-attempt'] = String(attempt)
      try {
        const answer = await this.postTo(key, report, url, headers, body)
        if (answer.status >= 200 && answer.status < 300) {
          this.delivered++
          return []
        }
        this.retried++
        reason = answeredStatus(answer.status)
      } catch (err) {
        if (err instanceof DeliveryStopped) throw err
        this.retried++
        reason = outboundFailure(err)
      }
    }
    this.failed++
    return [{
      id: uuidv7(), botId: bot.id, at: this.clock(), level: 'error', conversationId,
      message: `Delivery of ${event.type} event ${event.id} to ${url} failed after ${this.settings.attempts} attempt(s): ${reason}`,
    }]
  }

  /**
   * A bot-level event (no conversation: scheduled events, state_expired…): delivered in the
   * background under the bot's slots; a failure is written to the bot's logs.
   */
  async deliverBotEvent(bot: BotRow, event: RemoteEvent): Promise<void> {
    const release = await this.admit(botEndpoint(bot))
    try {
      const logs = await this.deliver(bot, event, null)
      if (logs.length > 0) await this.store.appendBotLogs(logs).catch(() => {})
    } catch (err) {
      // Stopped: nothing; paused: the caller's queue (the webhook's) delivers it again.
      if (err instanceof DeliveryDeferred) throw err
    } finally {
      release()
    }
  }

  /**
   * A bot-level event handed over by the runtime's seam (BotRuntime.deliverBotEvent: scheduled events,
   * bot-level createEvent, state_expired): delivered under the bot's slots with retries; its outcome
   * is the event's final status. Rejects with DeliveryStopped when the instance stops, or DeliveryDeferred while
   * the bot's url is paused (the event's queue delivers it again).
   */
  async deliverBotLevel(bot: BotRow, event: RemoteEvent): Promise<{ status: 'processed' } | { status: 'failed'; reason: string }> {
    const release = await this.admit(botEndpoint(bot))
    try {
      const logs = await this.deliver(bot, event, null)
      if (logs.length === 0) return { status: 'processed' }
      await this.store.appendBotLogs(logs).catch(() => {})
      return { status: 'failed', reason: logs[0]!.message.slice(0, 1000) }
    } finally {
      release()
    }
  }

  /** `register` (the url was set or changed): one attempt, its outcome logged. Never throws. */
  async register(bot: BotRow): Promise<void> {
    if (bot.url === null) return
    const { headers, body } = this.request(bot, 'register', 'register', {})
    let line: string
    let level = 'info'
    try {
      const answer = await this.call(botEndpoint(bot), this.botReport(bot), bot.url, headers, body)
      line = `register: ${bot.url} answered ${answer.status}`
      if (answer.status < 200 || answer.status >= 300) level = 'warn'
    } catch (err) {
      if (err instanceof DeliveryStopped) return
      level = 'warn'
      line = `register: ${bot.url} could not be reached: ${outboundFailure(err)}`
    }
    await this.store.appendBotLogs([{ id: uuidv7(), botId: bot.id, at: this.clock(), level, message: line, conversationId: null }]).catch(() => {})
  }

  /** `action_triggered`: body `{ type, input }`, the bot answers 200 `{ output }`. One attempt (the caller waits). */
  async callAction(bot: BotRow, type: string, input: unknown): Promise<RemoteAnswer> {
    const { headers, body } = this.request(bot, 'action_triggered', type, { type, input })
    return this.call(botEndpoint(bot), this.botReport(bot), bot.url!, headers, body)
  }

  /** A bot's breaker changes, in its logs. */
  private botReport(bot: BotRow): BreakerReport {
    return (change) => {
      const { level, message } = breakerLine(change, "the bot's url", this.slots.settings)
      void this.store.appendBotLogs([{ id: uuidv7(), botId: bot.id, at: this.clock(), level, message, conversationId: null }]).catch(() => {})
    }
  }

  registerMetrics(metrics: MetricsRegistry): void {
    metrics.collect('parley_remote_deliveries_in_flight', 'Delivery slots in use on this instance (remote bots and integrations)', () => this.slots.inFlight)
    metrics.collect('parley_delivery_slots_waiting', 'Deliveries and calls waiting for a slot of their remote bot or integration', () => this.slots.waiting)
    metrics.collect('parley_delivery_endpoints_paused', 'Remote bots and integrations whose circuit is open (paused after consecutive failures) on this instance', () => this.slots.open)
    metrics.collect('parley_delivery_circuit_changes_total', 'Circuit breaker changes of remote bots and integrations: opened (paused) and closed (answered again)',
      () => [{ labels: { change: 'opened' }, value: this.slots.counts.opened }, { labels: { change: 'closed' }, value: this.slots.counts.closed }], 'counter')
    metrics.collect('parley_delivery_refused_total', 'Requests not sent because their endpoint was paused (circuit open) or its queue was full (busy)',
      () => [{ labels: { reason: 'paused' }, value: this.slots.counts.refusedPaused }, { labels: { reason: 'busy' }, value: this.slots.counts.refusedBusy }], 'counter')
    metrics.collect('parley_remote_deliveries_total', 'Events this instance delivered to remote bots (answered 2xx)', () => this.delivered, 'counter')
    metrics.collect('parley_remote_delivery_attempts_failed_total', 'Delivery attempts to remote bots that failed (retried or given up)', () => this.retried, 'counter')
    metrics.collect('parley_remote_deliveries_failed_total', 'Events given up after the last attempt (recorded as failed in the bot\'s logs)', () => this.failed, 'counter')
  }
}
