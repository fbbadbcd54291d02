import { setMaxListeners } from 'node:events'
import http from 'node:http'
import https from 'node:https'
import { uuidv7 } from '../lib/ids.js'
import { OutboundError, OutboundPolicy, answeredStatus, outboundFailure } from '../lib/outbound-policy.js'
import { SIGNATURE_HEADER, signatureHeader } from '../lib/signature.js'
import type { RuntimeConversationView, RuntimeMessageView, RuntimeUserView } from '../domain/runtime-views.js'
import type { BotLogRow, BotRow, EventRow, IntegrationRow, MessageRow, Store } from '../store/store.js'
import type { MetricsRegistry } from '../lib/metrics.js'

/**
 * Remote bots: bots whose `url` is set (an @botpress/sdk program served elsewhere) get their events
 * as HTTP POSTs in the protocol the SDK's bot server reads (headers x-bot-id, x-bot-user-id,
 * x-bp-operation, x-bp-type, x-bp-configuration; body `{ event }`), signed with the bot's
 * signingSecret (x-parley-signature, src/lib/signature.ts). The bot answers through the Runtime API.
 *
 * The bot runtime schedules (one conversation at a time, in order, conversations in parallel, the
 * cursor moved after each 2xx); this module only runs a delivery: retries with backoff, then a
 * failure in the bot's logs. Concurrency is bounded per bot and overall (admit), so a slow or dead
 * bot holds its own slots and never the other bots'.
 */

export interface RemoteBotSettings {
  /** Wall time of one POST (connect to last byte of the answer). */
  timeoutMs: number
  /** POSTs per event before it is recorded as failed (1 = no retry). */
  attempts: number
  /** Wait before the first retry; doubled for each next one, capped at maxBackoffMs. */
  backoffMs: number
  maxBackoffMs: number
  /** Conversations of one bot delivered at once. */
  concurrencyPerBot: number
  /** Deliveries in flight at once, all bots together (per instance). */
  concurrency: number
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

/** A counting semaphore: `take` resolves with a release function once a slot is free (FIFO). */
class Slots {
  private used = 0
  private readonly waiting: (() => void)[] = []
  constructor(private readonly size: number) {}

  async take(): Promise<() => void> {
    if (this.used >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.used++
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.waiting.shift()
      if (next) next() // the slot passes on as is
      else this.used--
    }
  }

  get busy(): number {
    return this.used
  }
}

// ---- the event in Runtime API shapes (src/domain/runtime-views.ts, the same objects the Runtime API returns) ----

const iso = (ms: number) => new Date(ms).toISOString()

/** Where an event's message, user and conversation are read, as the Runtime API shows them (BotChatService in compose.ts). */
export interface ConversationViews {
  message(integration: IntegrationRow, row: MessageRow): Promise<RuntimeMessageView>
  user(integration: IntegrationRow, id: string): Promise<RuntimeUserView>
  conversation(integration: IntegrationRow, id: string): Promise<RuntimeConversationView>
  /** A Runtime API event of this id (createEvent), when the conversation's event is one. */
  runtimeEvent(bot: BotRow, id: string): Promise<{ type: string; payload: Record<string, unknown> } | undefined>
}

/** A Runtime API Event as a remote bot receives it (`event_received`, x-bp-type = its type). */
export interface RemoteEvent {
  id: string
  type: string
  payload: Record<string, unknown>
  createdAt: string
  conversationId?: string
  userId?: string
  messageId?: string
  status: 'pending'
  failureReason: null
}

/**
 * A conversation's incoming message (`message_created`: payload { message, user, conversation }) or
 * custom event of the chat integration (`chat:custom`: payload { userId, conversationId, payload },
 * as Botpress's chat integration emits it).
 */
export async function conversationEvent(views: ConversationViews, bot: BotRow, integration: IntegrationRow, incoming: { kind: 'message'; message: MessageRow } | { kind: 'event'; event: EventRow }): Promise<RemoteEvent> {
  const row = incoming.kind === 'message' ? incoming.message : incoming.event
  const base = { conversationId: row.conversationId, userId: row.userId, createdAt: iso(row.createdAt), status: 'pending' as const, failureReason: null }
  if (incoming.kind === 'event') {
    // An event the Runtime API created in this conversation (createEvent with conversationId) keeps its type
    // and payload; any other is the chat client's custom event.
    const created = await views.runtimeEvent(bot, row.id)
    if (created) return { id: row.id, type: created.type, payload: created.payload, ...base }
    return { id: row.id, type: `${integration.name}:custom`, payload: { userId: row.userId, conversationId: row.conversationId, payload: row.payload }, ...base }
  }
  const [message, user, conversation] = await Promise.all([views.message(integration, incoming.message), views.user(integration, row.userId), views.conversation(integration, row.conversationId)])
  return {
    id: row.id,
    type: 'message_created',
    payload: { message, user, conversation },
    messageId: row.id,
    ...base,
  }
}

// ---- delivery ----

export class RemoteBots {
  private readonly perBot = new Map<string, { slots: Slots; users: number }>()
  private readonly all: Slots
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
    options: { clock?: () => number; outbound?: OutboundPolicy } = {},
  ) {
    this.all = new Slots(settings.concurrency)
    this.outbound = options.outbound ?? new OutboundPolicy()
    // The checked resolver on the agents: every new connection is made to an address the policy allows (at connect
    // time, so a name that resolves elsewhere later is checked again). Answers are never followed (no redirects).
    const { lookup } = this.outbound
    this.agents = { 'http:': new http.Agent({ keepAlive: true, lookup }), 'https:': new https.Agent({ keepAlive: true, lookup }) }
    // One listener per request or wait in progress (bounded by the concurrency settings).
    setMaxListeners(0, this.stopping.signal)
    this.clock = options.clock ?? Date.now
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

  /** A delivery slot of this bot, then one of all bots: released by the returned function. */
  async admit(botId: string): Promise<() => void> {
    let entry = this.perBot.get(botId)
    if (!entry) {
      entry = { slots: new Slots(this.settings.concurrencyPerBot), users: 0 }
      this.perBot.set(botId, entry)
    }
    entry.users++
    const own = await entry.slots.take()
    const shared = await this.all.take()
    return () => {
      shared()
      own()
      if (--entry.users === 0) this.perBot.delete(botId)
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
    let reason = ''
    for (let attempt = 1; attempt <= this.settings.attempts; attempt++) {
      if (attempt > 1) await this.wait(this.backoff(attempt - 1))
      const { headers, body } = this.request(bot, 'event_received', event.type, { event }, event.id)
      headers['x-parley-attempt'] = String(attempt)
      try {
        const answer = await this.post(url, headers, body)
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
    const release = await this.admit(bot.id)
    try {
      const logs = await this.deliver(bot, event, null)
      if (logs.length > 0) await this.store.appendBotLogs(logs).catch(() => {})
    } catch {
      // stopped
    } finally {
      release()
    }
  }

  /**
   * A bot-level event handed over by the runtime's seam (BotRuntime.deliverBotEvent: scheduled events,
   * bot-level createEvent, state_expired): delivered under the bot's slots with retries; its outcome
   * is the event's final status. Rejects with DeliveryStopped when the instance stops (the event's
   * queue delivers it again).
   */
  async deliverBotLevel(bot: BotRow, event: RemoteEvent): Promise<{ status: 'processed' } | { status: 'failed'; reason: string }> {
    const release = await this.admit(bot.id)
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
      const answer = await this.post(bot.url, headers, body)
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
    return this.post(bot.url!, headers, body)
  }

  registerMetrics(metrics: MetricsRegistry): void {
    metrics.collect('parley_remote_deliveries_in_flight', 'Remote-bot POSTs in flight on this instance', () => this.all.busy)
    metrics.collect('parley_remote_deliveries_total', 'Events this instance delivered to remote bots (answered 2xx)', () => this.delivered, 'counter')
    metrics.collect('parley_remote_delivery_attempts_failed_total', 'Delivery attempts to remote bots that failed (retried or given up)', () => this.retried, 'counter')
    metrics.collect('parley_remote_deliveries_failed_total', 'Events given up after the last attempt (recorded as failed in the bot\'s logs)', () => this.failed, 'counter')
  }
}
