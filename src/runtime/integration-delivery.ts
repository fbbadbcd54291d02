import { uuidv7 } from '../lib/ids.js'
import type { MetricsRegistry } from '../lib/metrics.js'
import type { Installation, IntegrationService } from '../domain/integration-service.js'
import type { OutboxCursor } from '../store/integration-outbox-store.js'
import type { BotRow, IntegrationRow, MessageRow, Store } from '../store/store.js'
import type { IntegrationDelivery } from './integrations.js'
import type { RemoteBots } from './remote-bots.js'
import { DeliveryStopped } from './outbound-http.js'
import { failureLine, type DeliveryResult } from './delivery-policy.js'
import { SerialByKey } from './serial-by-key.js'

/**
 * Outgoing delivery to integrations served elsewhere (issue #19): every bot message appended in a conversation of an
 * installed integration is sent to the integration as `message_created`.
 *
 * The conversation's log is the queue (as for the bot runtime): a bot message is durable once appended, and a
 * cursor per conversation (IntegrationOutboxStore) says how far its bot messages were sent. One instance at a time
 * sends a conversation's messages, under a lease renewed before every POST (a sender that lost its lease — it
 * stalled past it and another instance took over — stops before sending again), in sequence order, each by the
 * delivery rules (src/runtime/delivery-policy.ts: only what was not processed is sent again, within the delivery
 * budget), and moves the cursor past it once it was delivered or failed. So a
 * restart or a crash (kill -9) loses nothing: a crashed instance's lease expires and the sweep of a live one takes
 * the conversation over; a stopping one gives its leases back. Delivery is at least once: a crash between the
 * integration's answer and the cursor's move sends that message again (same message id).
 *
 * Each message's outcome is on the message, as the tag `parley:delivery` (`delivered` or `failed`; absent while it
 * is on its way) with `parley:deliveryError` (the last attempt's reason) on a failure, which also goes to the
 * integration's logs (getIntegrationLogs), the bot's logs (getBotLogs) and its quality analytics.
 * Conversations are independent (in parallel, each with its own retries); the concurrency slots are RemoteBots',
 * keyed per integration, so a slow or dead integration holds its own slots and never a bot's or another integration's.
 */

/** The tag with a bot message's delivery status to its integration: `delivered` or `failed` (absent: not yet). */
export const DELIVERY_TAG = 'parley:delivery'
/** The reason of a `failed` delivery (the last attempt's answer or error). */
export const DELIVERY_ERROR_TAG = 'parley:deliveryError'

const SIGNAL_BATCH = 50
/** Above the longest single wait of a delivery (one POST, at most the budget, or one backoff), so a live sender never loses its lease. */
const LEASE_MARGIN_MS = 5_000
const CACHE_LIMIT = 10_000

/** The instance's lease on the conversation was lost (expired and taken over): stop without sending or recording. */
class LeaseLost extends DeliveryStopped {
  constructor() {
    super()
    this.message = 'The delivery lease of the conversation was taken over'
  }
}

type Outcome = DeliveryResult | { delivered: false; failure: 'error'; reason: string; attempts: 0 }

export interface OutgoingDeliveryOptions {
  /** How often conversations left behind (a dead instance's expired lease, a missed notification) are picked up. */
  sweepMs?: number | undefined
  clock?: (() => number) | undefined
  metrics?: MetricsRegistry | undefined
}

export class OutgoingDeliveries {
  private readonly sending = new SerialByKey(() => this.stopped)
  /** Whether an integration id is an installation (never changes for an id: built-ins stay built-in). */
  private readonly installed = new Map<string, boolean>()
  /** This instance's name on delivery leases. */
  private readonly instanceId = uuidv7()
  private readonly clock: () => number
  private stopped = false
  private sweeper: NodeJS.Timeout | undefined
  private delivered = 0
  private failed = 0
  private attemptsFailed = 0

  constructor(
    private readonly store: Store,
    private readonly remote: RemoteBots,
    private readonly service: IntegrationService,
    private readonly sender: IntegrationDelivery,
    private readonly options: OutgoingDeliveryOptions = {},
  ) {
    this.clock = options.clock ?? Date.now
    const metrics = options.metrics
    if (metrics) {
      metrics.collect('parley_integration_messages_delivered_total', 'Bot messages this instance delivered to integrations (message_created answered 2xx)', () => this.delivered, 'counter')
      metrics.collect('parley_integration_messages_failed_total', 'Bot messages given up after the last attempt (tagged parley:delivery=failed, in the integration\'s and the bot\'s logs)', () => this.failed, 'counter')
      metrics.collect('parley_integration_delivery_attempts_failed_total', 'message_created attempts the integration did not process: no connection, 502/503/504 or 429 (retried, or given up after the last)', () => this.attemptsFailed, 'counter')
      metrics.collect('parley_integration_conversations_sending', 'Conversations whose bot messages this instance is sending or about to send', () => this.sending.size)
    }
  }

  /** Picks up what a previous run left (and then, periodically, what another instance left behind). */
  async start(): Promise<void> {
    await this.sweep().catch(() => {})
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), this.options.sweepMs ?? 5_000)
    this.sweeper.unref()
  }

  /** Stops: requests and waits in progress end, leases are given back; what was not delivered is sent after the next start. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.sweeper)
    this.remote.stop()
    await this.sending.allIdle()
  }

  /** Resolves once no conversation is being sent by this instance (tests, benchmarks). */
  async idle(): Promise<void> {
    await this.sending.allIdle()
  }

  /** A bot message was appended in a conversation of `integration` (on this instance): sent soon, if it is an installation. */
  notify(integration: IntegrationRow, message: MessageRow): void {
    if (this.stopped) return
    void this.isInstallation(integration.id).then((yes) => {
      if (yes) this.schedule(integration.id, message.conversationId)
    }, () => {})
  }

  private async isInstallation(integrationId: string): Promise<boolean> {
    const known = this.installed.get(integrationId)
    if (known !== undefined) return known
    const yes = (await this.store.integrations.installationsOf([integrationId])).length > 0
    if (this.installed.size >= CACHE_LIMIT) this.installed.clear()
    this.installed.set(integrationId, yes)
    return yes
  }

  /** A lease lasts one POST (at most the delivery budget) or one backoff wait, with a margin; it is renewed before each POST and wait. */
  leaseMs(): number {
    const { budgetMs, maxBackoffMs } = this.remote.settings
    return Math.max(budgetMs, maxBackoffMs) + LEASE_MARGIN_MS
  }

  private async sweep(): Promise<void> {
    if (this.stopped) return
    for (const { integrationId, conversationId } of await this.store.integrationOutbox.behind(this.clock(), 1_000)) {
      this.installed.set(integrationId, true)
      this.schedule(integrationId, conversationId)
    }
  }

  private schedule(integrationId: string, conversationId: string): void {
    const key = `${integrationId}:${conversationId}`
    this.sending.schedule(key, () => this.drain(integrationId, conversationId, key))
  }

  /** Sends the conversation's pending bot messages under its lease; nothing when another instance holds it. */
  private async drain(integrationId: string, conversationId: string, key: string): Promise<void> {
    const integration = await this.store.getIntegration(integrationId)
    const install = integration && (await this.service.installation(integration))
    const bot = install && (await this.store.getBot(install.integration.botId))
    if (!install || !bot) return
    const outbox = this.store.integrationOutbox
    const claimed = await outbox.claim(integrationId, conversationId, this.instanceId, this.clock(), this.leaseMs())
    if (!claimed) return
    let cursor: OutboxCursor | undefined
    let completed = false
    try {
      if (claimed.deliveredSeq < claimed.lastSeq) await this.sendPending(bot, install, conversationId, claimed.deliveredSeq)
      completed = true
    } catch (err) {
      if (!(err instanceof LeaseLost) && !(err instanceof DeliveryStopped)) throw err
    } finally {
      cursor = await outbox.release(integrationId, conversationId, this.instanceId)
    }
    // More arrived meanwhile (another instance's notification found the lease taken): once more.
    if (completed && cursor && cursor.deliveredSeq < cursor.lastSeq && !this.stopped) this.sending.again(key)
  }

  /** The bot messages after `from`, in order: each sent (with retries) and recorded, then the cursor moved past it. */
  private async sendPending(bot: BotRow, install: Installation, conversationId: string, from: number): Promise<void> {
    const integrationId = install.integration.id
    const outbox = this.store.integrationOutbox
    let position = from
    for (;;) {
      const batch = await this.store.signalsSince(integrationId, conversationId, position, SIGNAL_BATCH)
      for (const signal of batch) {
        if (this.stopped) throw new DeliveryStopped()
        if (signal.kind === 'message_created' && signal.message.isBot) {
          const outcome = await this.deliver(bot, install, signal.message)
          await this.record(bot, install, signal.message, outcome)
          if (!(await outbox.advance(integrationId, conversationId, this.instanceId, signal.seq))) throw new LeaseLost()
        }
        position = signal.seq
      }
      if (batch.length < SIGNAL_BATCH) break
    }
    if (position > from && !(await outbox.advance(integrationId, conversationId, this.instanceId, position))) throw new LeaseLost()
  }

  /** Renews the lease for the next wait or POST; throws LeaseLost when another instance has taken the conversation. */
  private async hold(integrationId: string, conversationId: string): Promise<void> {
    if (this.stopped) throw new DeliveryStopped()
    if (!(await this.store.integrationOutbox.renew(integrationId, conversationId, this.instanceId, this.clock() + this.leaseMs()))) throw new LeaseLost()
  }

  /** One message, `message_created`, by the delivery rules. Throws only DeliveryStopped (LeaseLost included: nothing is recorded then). */
  private async deliver(bot: BotRow, install: Installation, message: MessageRow): Promise<Outcome> {
    const { integration } = install
    if (!integration.enabled) return { delivered: false, failure: 'error', reason: `the installation "${integration.name}" is disabled in this bot`, attempts: 0 }
    const views = this.remote.views
    const [view, user, conversation] = await Promise.all([
      views.message(integration, message), views.user(integration, message.userId), views.conversation(integration, message.conversationId),
    ])
    const body = { conversation, user, type: view.type, payload: view.payload, message: view }
    const hold = () => this.hold(integration.id, message.conversationId)
    return this.remote.retrying(
      (_, timeoutMs) => this.sender.once(bot, install, 'message_created', 'message_created', body, { beforeSend: hold, timeoutMs }),
      { beforeWait: hold, onRetry: () => this.attemptsFailed++ },
    )
  }

  /** The outcome on the message (its tags) and, for a failure, in the integration's and the bot's logs. */
  private async record(bot: BotRow, install: Installation, message: MessageRow, outcome: Outcome): Promise<void> {
    const { integration, definition } = install
    if (outcome.delivered) {
      this.delivered++
      await this.store.botChat.tagMessage(integration.id, message.id, { [DELIVERY_TAG]: 'delivered' })
      return
    }
    this.failed++
    const what = `Delivery of message ${message.id} (conversation ${message.conversationId}) to integration ${definition.name} (alias ${integration.name})`
    const line = outcome.attempts === 0 ? `${what} failed: ${outcome.reason}` : failureLine(what, outcome)
    await this.store.botChat.tagMessage(integration.id, message.id, { [DELIVERY_TAG]: 'failed', [DELIVERY_ERROR_TAG]: outcome.reason.slice(0, 1000) || 'unknown' })
    await this.service.log(definition.id, bot.id, 'error', line, message.conversationId)
    await this.store.appendBotLogs([{ id: uuidv7(), botId: bot.id, at: this.clock(), level: 'error', message: line, conversationId: message.conversationId }]).catch(() => {})
    // The bot's quality analytics: a reply its channel did not take (once per message).
    await this.store.quality.recordTurnFailure({
      botId: bot.id, sourceId: `delivery:${message.id}`, conversationId: message.conversationId, kind: 'delivery',
      reason: outcome.failure === 'timeout' ? 'timeout' : 'error', createdAt: this.clock(),
    }).catch(() => {})
  }
}
