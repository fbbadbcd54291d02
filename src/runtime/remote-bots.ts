import { uuidv7 } from '../lib/ids.js'
import { OutboundPolicy, outboundFailure } from '../lib/outbound-policy.js'
import { SIGNATURE_HEADER, signatureHeader } from '../lib/signature.js'
import type { BotLogRow, BotRow, Store } from '../store/store.js'
import { storedViews, type ConversationViews, type RemoteEvent } from './remote-events.js'
import type { MetricsRegistry } from '../lib/metrics.js'
import { EndpointPaused, EndpointSlots, type BreakerChange, type EndpointSlotSettings } from './endpoint-slots.js'
import { deliverWithRetries, failureLine, type DeliveryFailure, type DeliveryResult } from './delivery-policy.js'
import { urlName } from '../domain/hosted-code.js'
import type { HostedResolver } from './hosted/hosted-processes.js'
import { DeliveryStopped, OutboundHttp, type RemoteAnswer } from './outbound-http.js'

/**
 * Remote bots: bots whose `url` is set (an @botpress/sdk program served elsewhere) get their events
 * as HTTP POSTs in the protocol the SDK's bot server reads (headers x-bot-id, x-bot-user-id,
 * x-bp-operation, x-bp-type, x-bp-configuration; body `{ event }`), signed with the bot's
 * signingSecret (x-parley-signature, src/lib/signature.ts). The bot answers through the Runtime API.
 *
 * The bot runtime schedules (one conversation at a time, in order, conversations in parallel, the
 * cursor moved after each event's outcome); this module only runs a delivery by the rules of
 * src/runtime/delivery-policy.ts (what was not processed is retried with backoff; an answer is final;
 * the budget bounds it), a failure going to the bot's logs and quality analytics. Every request goes through the endpoint's slots and circuit breaker
 * (src/runtime/endpoint-slots.ts; an endpoint is a bot, key its id, or an integration, key
 * `integration:<id>`), so a slow or dead endpoint holds its own slots and never another's, and one that
 * keeps failing is paused: a durable delivery to it waits (DeliveryDeferred), a caller is refused at once.
 */

export interface RemoteBotSettings {
  /** Wall time of one call someone waits for (an action, a webhook relay, a ping): connect to last byte of the answer. */
  timeoutMs: number
  /** Wall time of one delivery (an event, an integration's message or register), every attempt and wait included. */
  budgetMs: number
  /** POSTs of a delivery that was not processed (no connection, 502/503/504, 429) before it is recorded as failed (1 = no retry). */
  attempts: number
  /** Wait before the first retry; doubled for each next one, capped at maxBackoffMs. */
  backoffMs: number
  maxBackoffMs: number
}

export type RemoteOperation = 'event_received' | 'register' | 'unregister' | 'ping' | 'action_triggered'

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
  /** Events this instance delivered (answered 2xx), attempts not processed (retried or given up), events failed by why. */
  private delivered = 0
  private retried = 0
  private readonly failed: Record<DeliveryFailure, number> = { error: 0, timeout: 0, unreachable: 0 }
  /** Requests and waits, ended together when the instance stops. */
  readonly http: OutboundHttp
  private readonly clock: () => number
  /** How an event's message, user and conversation are shown (the Runtime API's views of the stored rows). */
  readonly views: ConversationViews

  constructor(
    private readonly store: Store,
    readonly settings: RemoteBotSettings,
    slotSettings: EndpointSlotSettings,
    options: { clock?: () => number; outbound?: OutboundPolicy; hosted?: HostedResolver; views?: ConversationViews } = {},
  ) {
    this.views = options.views ?? storedViews(store)
    this.http = new OutboundHttp(options.outbound ?? new OutboundPolicy(), options.hosted)
    this.clock = options.clock ?? Date.now
    this.slots = new EndpointSlots(slotSettings, this.clock)
  }

  /** Ends waits and requests in progress: their events stay where they were, for the next start. */
  stop(): void {
    this.http.stop()
  }

  /**
   * The longest one event can take (its budget: every attempt and wait), plus a margin: a conversation's lease, so no
   * other instance sends the conversation's next copy while a slow handler still runs.
   */
  leaseMs(): number {
    return this.settings.budgetMs + 10_000
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
  async postTo(key: string, report: BreakerReport, url: string, headers: Record<string, string>, body: string, timeoutMs = this.settings.timeoutMs): Promise<RemoteAnswer> {
    let settle: (outcome: 'answered' | 'failed' | 'none') => void
    try {
      settle = this.slots.begin(key, report)
    } catch (err) {
      throw err instanceof EndpointPaused ? new DeliveryDeferred(err.retryAfterMs) : err
    }
    try {
      const answer = await this.post(url, headers, body, timeoutMs)
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
    return this.http.send('POST', url, headers, body, timeoutMs)
  }

  /**
   * Runs a delivery by the rules of src/runtime/delivery-policy.ts with this instance's settings, clock and stop
   * signal; `send` makes one attempt in the time left. Rejects only with DeliveryStopped (DeliveryDeferred included).
   */
  retrying(send: (attempt: number, timeoutMs: number) => Promise<RemoteAnswer>, options: { budgetMs?: number; beforeWait?: () => Promise<void>; onRetry?: () => void } = {}): Promise<DeliveryResult> {
    return deliverWithRetries({
      settings: this.settings, budgetMs: options.budgetMs ?? this.settings.budgetMs, clock: this.clock, wait: (ms) => this.http.wait(ms), send,
      passes: (err) => err instanceof DeliveryStopped, beforeWait: options.beforeWait, onRetry: options.onRetry ?? (() => this.retried++),
    })
  }

  /**
   * A delivery someone may wait for (register, a webhook relay) to `key`'s endpoint: a bounded slot (refused at once
   * with EndpointBusy or EndpointPaused), then the attempts within `budgetMs`.
   */
  async callRetrying(key: string, report: BreakerReport, url: string, request: () => { headers: Record<string, string>; body: string }, budgetMs: number): Promise<DeliveryResult> {
    const release = await this.slots.acquire(key, { bounded: true })
    try {
      return await this.retrying((_, timeoutMs) => {
        const { headers, body } = request()
        return this.postTo(key, report, url, headers, body, timeoutMs)
      }, { budgetMs })
    } catch (err) {
      throw err instanceof DeliveryDeferred ? new EndpointPaused(key, err.retryAfterMs) : err
    } finally {
      release()
    }
  }

  /**
   * Delivers one event (`event_received`) by the delivery rules. Resolves with nothing to log when the bot answered
   * 2xx, else with the failure's log line and why (`failure`); rejects only with DeliveryStopped. The signature is
   * made again for each attempt (fresh timestamp).
   */
  async deliver(bot: BotRow, event: RemoteEvent, conversationId: string | null): Promise<{ logs: BotLogRow[]; failure?: DeliveryFailure }> {
    const url = bot.url
    if (url === null) return { logs: [] }
    const key = botEndpoint(bot)
    const report = this.botReport(bot)
    const result = await this.retrying((attempt, timeoutMs) => {
      const { headers, body } = this.request(bot, 'event_received', event.type, { event }, event.id)
      headers['x-parley-attempt'] = String(attempt)
      return this.postTo(key, report, url, headers, body, timeoutMs)
    })
    if (result.delivered) {
      this.delivered++
      return { logs: [] }
    }
    this.failed[result.failure]++
    return {
      failure: result.failure,
      logs: [{ id: uuidv7(), botId: bot.id, at: this.clock(), level: 'error', conversationId, message: failureLine(`Delivery of ${event.type} event ${event.id} to ${urlName(url)}`, result) }],
    }
  }

  /** A failed bot-level event (no conversation) in the bot's logs and its quality analytics. */
  private async recordBotLevel(bot: BotRow, event: RemoteEvent, outcome: { logs: BotLogRow[]; failure?: DeliveryFailure }): Promise<void> {
    if (!outcome.failure) return
    await this.store.appendBotLogs(outcome.logs).catch(() => {})
    await this.store.quality.recordTurnFailure({
      botId: bot.id, sourceId: event.id, conversationId: null, kind: 'event', reason: outcome.failure === 'timeout' ? 'timeout' : 'error', createdAt: this.clock(),
    }).catch(() => {})
  }

  /**
   * A bot-level event (no conversation: scheduled events, state_expired…): delivered in the
   * background under the bot's slots; a failure is written to the bot's logs.
   */
  async deliverBotEvent(bot: BotRow, event: RemoteEvent): Promise<void> {
    const release = await this.admit(botEndpoint(bot))
    try {
      await this.recordBotLevel(bot, event, await this.deliver(bot, event, null))
    } catch (err) {
      // Stopped: nothing; paused: the caller's queue (the webhook's) delivers it again.
      if (err instanceof DeliveryDeferred) throw err
    } finally {
      release()
    }
  }

  /**
   * A bot-level event handed over by the runtime's seam (BotRuntime.deliverBotEvent: scheduled events,
   * bot-level createEvent, state_expired): delivered under the bot's slots by the delivery rules; its outcome
   * is the event's final status. Rejects with DeliveryStopped when the instance stops, or DeliveryDeferred while
   * the bot's url is paused (the event's queue delivers it again).
   */
  async deliverBotLevel(bot: BotRow, event: RemoteEvent): Promise<{ status: 'processed' } | { status: 'failed'; reason: string }> {
    const release = await this.admit(botEndpoint(bot))
    try {
      const outcome = await this.deliver(bot, event, null)
      if (!outcome.failure) return { status: 'processed' }
      await this.recordBotLevel(bot, event, outcome)
      return { status: 'failed', reason: outcome.logs[0]!.message.slice(0, 1000) }
    } finally {
      release()
    }
  }

  /** `register` (the url was set or changed): by the delivery rules (retried while not processed), its outcome logged. Never throws. */
  async register(bot: BotRow): Promise<void> {
    if (bot.url === null) return
    let line: string
    let level = 'info'
    try {
      const result = await this.callRetrying(botEndpoint(bot), this.botReport(bot), bot.url, () => this.request(bot, 'register', 'register', {}), this.settings.budgetMs)
      line = result.delivered ? `register: ${urlName(bot.url)} answered ${result.answer.status}` : failureLine(`register: ${urlName(bot.url)}`, result)
      if (!result.delivered) level = 'warn'
    } catch (err) {
      if (err instanceof DeliveryStopped) return
      level = 'warn'
      line = `register: ${urlName(bot.url)} could not be reached: ${outboundFailure(err)}`
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
    metrics.collect('parley_remote_delivery_attempts_failed_total', 'Attempts to remote bots (events, register) that were not processed: no connection, 502/503/504 or 429 (retried, or given up after the last)', () => this.retried, 'counter')
    metrics.collect('parley_remote_deliveries_failed_total', 'Events recorded as failed in the bot\'s logs and quality analytics, by failure: error (the bot\'s code answered an error; not retried), timeout (no answer within PARLEY_DELIVERY_BUDGET_MS; not re-sent), unreachable (not processed on any attempt)',
      () => Object.entries(this.failed).map(([failure, value]) => ({ labels: { failure }, value })), 'counter')
  }
}
