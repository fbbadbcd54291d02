import { uuidv7 } from '../lib/ids.js'
import { MetricsRegistry } from '../lib/metrics.js'
import { publishTyping } from '../domain/conversation-stream.js'
import { handoffEventType, type HandoffService } from '../domain/handoff-service.js'
import type { PubSub } from '../pubsub/pubsub.js'
import type { BotCursor, BotRow, IntegrationRow, Store } from '../store/store.js'
import { hasTurns, TURNS_CHANNEL, type BotDirectory } from './bot-directory.js'
import { DeliveryStopped } from './outbound-http.js'
import type { RemoteBots } from './remote-bots.js'
import { TYPING_TTL_MS } from './sandbox-host.js'
import type { SandboxTurns } from './sandbox-turns.js'
import type { RunFailure, SandboxUnits } from './sandbox-units.js'
import { SerialByKey } from './serial-by-key.js'
import { remoteTurnExecutor, type TurnExecutor, type TurnResult } from './turn-executor.js'
import { isStarted, loadState, startedId, type Incoming, type LoadedState } from './turn-event.js'

const TURN_BATCH = 50
/** A running turn's typing indicator is renewed this often (it expires TYPING_TTL_MS after the last renewal). */
const TYPING_RENEW_MS = 4_000
/**
 * A turn shows the bot typing only once it has run this long. A quicker turn's answer arrives before anyone could see
 * the indicator, and its two frames per listener cost a quarter of an echo turn's server time (bench turns-client:
 * 405 → 537 turns/s without them).
 */
export const TYPING_DELAY_MS = 300
/**
 * A turn renews the conversation's lease only when the last renewal is older than this: a lease
 * lasts a whole turn's limit + 10 s, so the next turn still starts with more than it can use.
 */
const LEASE_RENEW_MS = 2_000
/** The queue-depth gauge counts at most this many conversations behind (one query per scrape). */
const BEHIND_COUNT_CAP = 10_000

export interface TurnSchedulerOptions {
  /** Delivers the turns of bots with a `url` (remote @botpress/sdk programs); without it such bots' turns are skipped. */
  remote?: RemoteBots | undefined
  /** Human handoff: a handed-off conversation's messages run no turns. */
  handoffs?: HandoffService | undefined
  /** How often conversations left behind (a dead instance's expired lease, a missed notification) are picked up. */
  sweepMs?: number | undefined
  clock?: (() => number) | undefined
  metrics?: MetricsRegistry | undefined
}

/**
 * Schedules conversation turns. The conversation's own signal log is the work queue: every incoming
 * message or event after the conversation's bot cursor is a turn, processed in sequence order, one
 * conversation at a time (different conversations in parallel), under the conversation's lease (claimed,
 * renewed, released). The cursor moves only after a turn ends, so after a restart unfinished turns run
 * again; their replies have deterministic ids, so a user never gets one twice. Work arrives by
 * notification (TURNS_CHANNEL) and, for what was missed or left behind, by a periodic sweep.
 */
export class TurnScheduler {
  private readonly clock: () => number
  private readonly turns = new SerialByKey(() => this.stopped)
  private readonly unsubscribes: (() => Promise<void>)[] = []
  private stopped = false
  private sweeper: NodeJS.Timeout | undefined
  /** This instance's name on conversation leases. */
  private readonly instanceId = uuidv7()
  private readonly remoteTurns: TurnExecutor | undefined

  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly directory: BotDirectory,
    private readonly sandboxTurns: SandboxTurns,
    private readonly units: SandboxUnits,
    private readonly options: TurnSchedulerOptions,
  ) {
    this.clock = options.clock ?? Date.now
    this.remoteTurns = options.remote && remoteTurnExecutor(options.remote)
    const metrics = options.metrics ?? new MetricsRegistry()
    metrics.collect('parley_bot_conversations_behind',
      `Conversations with incoming messages or events their bot has not processed yet (the bot runtime's queue depth, all instances; counted up to ${BEHIND_COUNT_CAP})`,
      async () => (await store.conversationsBehind(BEHIND_COUNT_CAP)).length)
    metrics.collect('parley_bot_conversations_running', 'Conversations whose turns this instance is running or about to run', () => this.turns.size)
  }

  /** Listens for turn notifications (and, through the directory, bot changes), runs what was left behind, then sweeps periodically. */
  async start(): Promise<void> {
    this.unsubscribes.push(
      await this.pubsub.subscribe(TURNS_CHANNEL, (message) => {
        const [integrationId, conversationId] = JSON.parse(message) as [string, string]
        this.schedule(integrationId, conversationId)
      }),
      await this.directory.start(),
    )
    // Work left by a previous run of the process, then periodically: what another instance left behind.
    await this.sweep()
    const stopListening = this.pubsub.onReconnect?.(() => void this.sweep().catch(() => {}))
    if (stopListening) this.unsubscribes.push(async () => stopListening())
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), this.options.sweepMs ?? 5_000)
    this.sweeper.unref()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.sweeper)
    this.options.remote?.stop()
    await Promise.all(this.unsubscribes.splice(0).map((u) => u()))
    await this.turns.allIdle()
  }

  /** Resolves when the conversation has no turn running or pending (tests, shutdown). */
  async idle(integrationId: string, conversationId: string): Promise<void> {
    await this.turns.idle(`${integrationId}:${conversationId}`)
  }

  private async sweep(): Promise<void> {
    for (const { integrationId, conversationId } of await this.store.conversationsBehind(1_000)) this.schedule(integrationId, conversationId)
  }

  private schedule(integrationId: string, conversationId: string): void {
    this.turns.schedule(`${integrationId}:${conversationId}`, () => this.drain(integrationId, conversationId))
  }

  /** The executor of a bot's turns: remote when it has a url, else the sandbox. */
  private executorOf(bot: BotRow): TurnExecutor | undefined {
    return bot.url !== null ? this.remoteTurns : bot.code !== null ? this.sandboxTurns.executor : undefined
  }

  /** Leases outlive the bot's longest turn, so a live owner never loses one mid-turn. */
  private leaseMs(bot: BotRow): number {
    return (this.executorOf(bot) ?? this.sandboxTurns.executor).leaseMs(bot)
  }

  /**
   * Whether an incoming message or event is for a person instead of the bot: it was written while a handoff of
   * its conversation was open (by its createdAt, not the handoff's state now: a message written during a handoff
   * stays the agent's even when the runtime reaches it after the handoff ended). The handoff's own marker events
   * (handoff_started / handoff_ended) always run a turn.
   */
  private async forAgent(integrationId: string, conversationId: string, incoming: Incoming): Promise<boolean> {
    if (!this.options.handoffs || incoming.kind === 'started') return false
    if (incoming.kind === 'event' && handoffEventType(incoming.event)) return false
    const at = incoming.kind === 'message' ? incoming.message.createdAt : incoming.event.createdAt
    return this.options.handoffs.handedOffAt(integrationId, conversationId, at)
  }

  /**
   * Runs the conversation's pending turns under its lease. Another instance holding the lease is
   * running them already; a dead instance's lease expires and the sweep takes the work over (its
   * unfinished turn runs again, and deterministic reply ids keep the user from seeing a reply twice).
   */
  private async drain(integrationId: string, conversationId: string): Promise<void> {
    const owner = await this.directory.ownerOf(integrationId)
    if (!owner) return
    // Room first (a remote bot's slots), then the lease: waiting for room holds no lease.
    const release = await (this.executorOf(owner.bot) ?? this.sandboxTurns.executor).admit(owner.bot)
    let cursor: BotCursor | undefined
    try {
      if (this.stopped) return
      const claimed = await this.store.claimBotConversation(integrationId, conversationId, this.instanceId, this.clock(), this.leaseMs(owner.bot))
      if (!claimed) return
      let released: { cursor: BotCursor | undefined } | undefined
      try {
        released = await this.runPending(owner.bot, owner.integration, conversationId, claimed)
      } finally {
        cursor = released ? released.cursor : await this.store.releaseBotConversation(integrationId, conversationId, this.instanceId)
      }
    } finally {
      release()
    }
    // Work that arrived while another instance's notification found the lease taken.
    if (cursor && cursor.botSeq < cursor.lastSeq && hasTurns(owner.bot) && !this.stopped) this.turns.again(`${integrationId}:${conversationId}`)
  }

  /**
   * Each turn ends with one transaction (finishBotTurn: its states, its logs, the cursor past it and,
   * now and then, the lease). Signals that are not turns (the bot's own replies…) move the cursor with
   * the next turn, or once at the end. The drain's last turn, when nothing follows it in what was read,
   * also lets the lease go in that transaction: the cursor it answers is returned (the caller releases otherwise).
   */
  private async runPending(bot: BotRow, integration: IntegrationRow, conversationId: string, cursor: BotCursor): Promise<{ cursor: BotCursor | undefined } | undefined> {
    const executor = this.executorOf(bot)
    if (!executor) {
      // No code deployed and no url: nothing to run, and nothing to replay later when code arrives.
      await this.store.advanceBotCursor(integration.id, conversationId, cursor.lastSeq)
      return undefined
    }
    let position = cursor.botSeq
    let saved = position
    let renewedAt = this.clock()
    // The start turn runs the bot's own conversationStarted triggers: sandboxed bots only (a remote bot has no such triggers).
    // Checked with the first turn's own read of its states (the flow record says `started`), or alone when no turn comes.
    let startPending = executor === this.sandboxTurns.executor
    for (;;) {
      const batch = await this.store.signalsSince(integration.id, conversationId, position, TURN_BATCH)
      for (const [index, signal] of batch.entries()) {
        if (this.stopped) break
        if (signal.seq <= position) continue
        const incoming: Incoming | undefined =
          signal.kind === 'message_created' && !signal.message.isBot && !signal.message.botSkip ? { kind: 'message', message: signal.message }
          : signal.kind === 'event_created' && !signal.event.isBot && !signal.event.botSkip ? { kind: 'event', event: signal.event }
          : undefined
        const before = position
        position = signal.seq
        if (!incoming) continue
        let loaded: LoadedState | undefined
        if (startPending) {
          startPending = false
          loaded = await loadState(this.store, bot, integration.id, conversationId, incoming.kind === 'message' ? incoming.message.userId : incoming.event.userId)
          if (!isStarted(loaded.flow)) {
            await this.startTurn(bot, integration, conversationId, before)
            loaded = undefined
          }
        }
        // Handed off: stored and streamed as usual, answered by a person; the cursor passes over it.
        if (await this.forAgent(integration.id, conversationId, incoming)) continue
        let result: TurnResult
        try {
          result = await this.typingWhile(integration.id, conversationId, () => executor.turn(bot, integration, incoming, loaded))
        } catch (err) {
          if (!(err instanceof DeliveryStopped)) throw err
          // Stopping: the cursor stays before this event (not even moved over what preceded it since the
          // last saved turn), so it is delivered again after the restart.
          return
        }
        const { states, logs, ownSeqs } = result
        if (result.failure) await this.recordTurnFailure(bot, conversationId, incoming, result.failure)
        // The turn's own replies right after its message are passed over with it: no second drain just to skip them.
        for (const seq of ownSeqs.sort((a, b) => a - b)) if (seq === position + 1) position = seq
        const now = this.clock()
        const renew = now - renewedAt >= LEASE_RENEW_MS
        // The last signal read, of a batch that was not full: nothing is left to do under the lease after this turn.
        const last = batch.length < TURN_BATCH && index === batch.length - 1 && !this.stopped
        const end = {
          botId: bot.id, integrationId: integration.id, conversationId, seq: position, now,
          ...(renew && { lease: { owner: this.instanceId, ttlMs: this.leaseMs(bot) } }),
          ...(last && { release: this.instanceId }),
        }
        let released: BotCursor | undefined
        try {
          released = await this.store.finishBotTurn({ ...end, states, logs })
        } catch (err) {
          // The turn ran (its replies are sent): record why its state was not saved and move on, as for a failed turn.
          await this.store.appendBotLogs([...logs, this.units.failureLog(bot, conversationId, 'Saving the turn', err)]).catch(() => {})
          released = await this.store.finishBotTurn({ ...end, states: [], logs: [] })
        }
        if (last) return { cursor: released }
        if (renew) renewedAt = now
        saved = position
      }
      if (startPending && !this.stopped) {
        // No turn came: the start turn alone (its greeting is then read and passed over with the rest).
        startPending = false
        if (await this.startTurn(bot, integration, conversationId, position)) saved = position
        continue
      }
      if (batch.length < TURN_BATCH || this.stopped) break
    }
    if (position > saved) await this.store.advanceBotCursor(integration.id, conversationId, position)
    return undefined
  }

  /**
   * The conversation's start, its own turn before anything the user sent: a conversation created by a
   * user (the Chat API, hence the webchat and `parley chat`) that the bot has not started yet runs the
   * bot's `conversationStarted` triggers (its greeting), so that the greeting arrives when the chat
   * opens and the first message is answered for what it says. Runs once: the flow record then says
   * `started` (as it does after any turn). A conversation the bot created (no owner) has no start.
   */
  private async startTurn(bot: BotRow, integration: IntegrationRow, conversationId: string, position: number): Promise<boolean> {
    const [flow] = await this.store.getBotStates(bot.id, [{ scope: 'flow', scopeId: `${integration.id}:${conversationId}` }])
    if (isStarted(flow)) return false
    const conversation = await this.store.getConversation(integration.id, conversationId)
    if (!conversation || conversation.ownerId === null) return false
    const ownerId = conversation.ownerId
    const started: Incoming = { kind: 'started', conversation: { ...conversation, ownerId } }
    const { states, logs, failure } = await this.typingWhile(integration.id, conversationId, () => this.sandboxTurns.turn(bot, integration, started))
    if (failure) await this.recordTurnFailure(bot, conversationId, started, failure)
    const end = { botId: bot.id, integrationId: integration.id, conversationId, seq: position, now: this.clock() }
    try {
      await this.store.finishBotTurn({ ...end, states, logs })
      return true
    } catch (err) {
      await this.store.appendBotLogs([...logs, this.units.failureLog(bot, conversationId, 'Saving the turn', err)]).catch(() => {})
      return false
    }
  }

  /**
   * The conversation's streams show the bot typing while `work` (a turn) runs, once it has run TYPING_DELAY_MS: a
   * `typing` notification on the conversation's channel, renewed every TYPING_RENEW_MS (so a stream opened meanwhile,
   * on any instance, learns it), and a stop at the end. A quicker turn sends neither. Best effort: a lost notification
   * expires after TYPING_TTL_MS.
   */
  private async typingWhile<T>(integrationId: string, conversationId: string, work: () => Promise<T>): Promise<T> {
    const publish = (active: boolean) => void publishTyping(this.pubsub, integrationId, conversationId, active, TYPING_TTL_MS).catch(() => {})
    let renew: NodeJS.Timeout | undefined
    const start = setTimeout(() => {
      publish(true)
      renew = setInterval(() => publish(true), TYPING_RENEW_MS)
      renew.unref()
    }, TYPING_DELAY_MS)
    start.unref()
    try {
      return await work()
    } finally {
      clearTimeout(start)
      if (renew !== undefined) {
        clearInterval(renew)
        publish(false)
      }
    }
  }

  /**
   * A failed conversation turn, for the dashboard (getBotQualityAnalytics). Keyed by the turn's source: a turn run
   * again after a restart is recorded once. Best effort: the turn's outcome is in its logs either way.
   */
  private async recordTurnFailure(bot: BotRow, conversationId: string, incoming: Incoming, reason: RunFailure): Promise<void> {
    const sourceId = incoming.kind === 'message' ? incoming.message.id : incoming.kind === 'event' ? incoming.event.id : startedId(incoming.conversation)
    await this.store.quality.recordTurnFailure({
      botId: bot.id, sourceId, conversationId, kind: incoming.kind === 'started' ? 'start' : incoming.kind, reason, createdAt: this.clock(),
    }).catch(() => {})
  }
}
