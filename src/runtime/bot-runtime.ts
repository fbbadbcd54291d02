import { createHash } from 'node:crypto'
import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { answeredStatus, unansweredError } from '../lib/outbound-policy.js'
import { diffState } from '../lib/state-patch.js'
import { publishTyping } from '../domain/conversation-stream.js'
import { CHAT_PAGE_SIZE, type IncomingDraft, type IncomingHook, type IncomingInterceptor } from '../domain/chat-service.js'
import { eventView } from '../domain/chat-views.js'
import type { BotChatService } from '../domain/bot-chat-service.js'
import { checkDeclaredAction } from '../domain/builtin-actions.js'
import { handoffEventType, type HandoffService } from '../domain/handoff-service.js'
import { runtimeConversationView } from '../domain/runtime-views.js'
import { optionalTags, sandboxMessageView, sandboxRuntimeCall, sandboxUserView } from './sandbox-client.js'
import { sandboxTableCall } from './sandbox-tables.js'
import type { TablesService } from '../domain/tables-service.js'
import type { PubSub } from '../pubsub/pubsub.js'
import type { AppendNotification, BotCursor, BotLogRow, BotRow, BotStateKey, BotStateWrite, ConversationRow, EventRow, IntegrationRow, JsonObject, MessageRow, Store } from '../store/store.js'
import { BUDGET_EXCEEDED, type BeforeIncomingOutput, type BotSummary, type LogLevel, type TurnInput, type TurnOutput } from './prelude-contract.js'
import { previewOf } from './preview.js'
import { searchForBotScored, type AnswerComposer, type KbResult } from './knowledge.js'
import type { SemanticRanking } from '../domain/knowledge/embeddings/fusion.js'
import { botEndpoint, type RemoteBots } from './remote-bots.js'
import { DeliveryStopped } from './outbound-http.js'
import { conversationEvent } from './remote-events.js'
import { refusedError } from './endpoint-slots.js'
import { SandboxError, type BotSandbox, type SandboxHost, type SandboxLimits } from './sandbox.js'
import { mapDeployedPositions, SourceMap } from './source-map.js'
import { MetricsRegistry, type Counter, type Histogram } from '../lib/metrics.js'
import { webhookEvent, withExtension, type HostExtension, type WebhookEventSource } from './webhook-events.js'
import { botLevelTurnEvent, type BotEventOutcome, type BotLevelEvent } from './bot-events.js'
import { SerialByKey } from './serial-by-key.js'

/** The channel on which new incoming messages and events announce "this conversation has work". */
export const TURNS_CHANNEL = 'bot-turns'
/** Bots that changed (code deployed, integrations toggled, deleted): instances drop their cached copy. */
export const BOTS_CHANNEL = 'bots-changed'
/** Safety net for a missed change notification. */
const BOT_CACHE_TTL_MS = 5_000
const TURN_BATCH = 50
/** Largest output of an action (callAction): the Runtime API's 1 MB. */
const MAX_ACTION_OUTPUT = 1024 * 1024
/** A running turn's typing indicator is renewed this often, and expires this long after the last renewal. */
const TYPING_RENEW_MS = 4_000
export const TYPING_TTL_MS = 12_000
/** The longest typing indicator bot code may start (client.startTypingIndicator's timeout). */
const MAX_TYPING_TIMEOUT_MS = 60_000

/**
 * A turn renews the conversation's lease only when the last renewal is older than this: a lease
 * lasts a whole turn's limit + 10 s, so the next turn still starts with more than it can use.
 */
const LEASE_RENEW_MS = 2_000

export type PayloadValidator = (payload: unknown) => string | undefined

export interface BotRuntimeOptions {
  limits: SandboxLimits
  /** Told when any bot changed on any instance (caches of integrations are dropped). */
  /** A bot changed or was deleted (on every instance: told through pub/sub). */
  onBotsChanged?: (botId: string) => void
  /** How often conversations left behind (a dead instance's expired lease, a missed notification) are picked up. */
  sweepMs?: number
  /** Validates payloads sent by bot code with the same rules as the Chat API. */
  validatePayload: PayloadValidator
  clock?: () => number
  /** Composes knowledge-card answers (an OpenAI-compatible endpoint); the best passage is used when absent. */
  composeAnswer?: AnswerComposer | undefined
  /** The vector ranking knowledge searches fuse with the lexical one (an embeddings service); lexical only when absent. */
  semanticRanking?: SemanticRanking | undefined
  /** Relevance threshold of bot knowledge searches (PARLEY_KB_MIN_SCORE; 0: off). */
  kbMinScore?: number | undefined
  /** Delivers the turns of bots with a `url` (remote @botpress/sdk programs); without it such bots' turns are skipped. */
  remote?: RemoteBots | undefined
  /** The instance's registry: the runtime's series (turns, their duration, failures, conversations behind) go there. */
  metrics?: MetricsRegistry | undefined
}

/** What a sandbox run was for (the `kind` label of the runtime's series). */
type RunKind = 'message' | 'event' | 'start' | 'webhook' | 'bot_event' | 'action' | 'before_incoming'
/** How a sandbox run ended: `error` = the bot code threw (caught and logged), the others = stopped by the sandbox. */
type RunFailure = 'error' | 'timeout' | 'memory' | 'crashed'
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** The queue-depth gauge counts at most this many conversations behind (one query per scrape). */
const BEHIND_COUNT_CAP = 10_000

/** What a turn runs for: an incoming message or event, or the start of a conversation (its creation by a user). */
export type Incoming = { kind: 'message'; message: MessageRow } | { kind: 'event'; event: EventRow } | { kind: 'started'; conversation: ConversationRow & { ownerId: string } }

export interface TurnResult {
  states: BotStateWrite[]
  logs: BotLogRow[]
  ownSeqs: number[]
  /** Why the turn's bot code failed, if it did (recorded for the dashboard: quality-store.ts). */
  failure?: RunFailure | undefined
}

/**
 * Runs one turn of a conversation; the runtime schedules (which conversation, in which order, under
 * which lease) and saves what the turn leaves. Two executors: the sandbox (the bot's deployed code)
 * and the remote one (a POST to the bot's url). A bot with a url is remote, whatever code it has.
 */
export interface TurnExecutor {
  /** How long a conversation's lease must last for one turn of this bot. */
  leaseMs(bot: BotRow): number
  /** Waits for room to run this bot's turns (bounded concurrency); the returned function gives it back. */
  admit(bot: BotRow): Promise<() => void>
  /**
   * Rejects only when the instance stops (the turn is then run again after the restart). `loaded`: the turn's
   * states as the runtime just read them (the sandbox's start check), so the turn does not read them again.
   */
  turn(bot: BotRow, integration: IntegrationRow, incoming: Incoming, loaded?: LoadedState): Promise<TurnResult>
}

/** A turn's states as read before it runs (user, conversation, bot, and the flow record with its workflow variables). */
export interface LoadedState { keys: BotStateKey[]; state: Record<'user' | 'conversation' | 'bot' | 'workflow', JsonObject>; flow: JsonObject | undefined }

/** The flow record says the conversation's start turn ran (it does after any turn). */
const isStarted = (flow: JsonObject | undefined) => (flow as { started?: boolean } | undefined)?.started === true

/** Whether a bot has turns to run: deployed code, or a url. */
export const hasTurns = (bot: BotRow) => bot.url !== null || bot.code !== null

/** Deterministic ids for a turn's replies: a turn re-run after a crash cannot reply twice. */
function replyId(sourceId: string, index: number): string {
  const hex = createHash('sha256').update(`${sourceId}:${index}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** `{ metadata }` of a user's message that has one (stored, or about to be: beforeIncoming), else nothing. */
function messageMetadata(incoming: Incoming | (IncomingDraft & { kind: 'draft' })): { metadata?: JsonObject } {
  const metadata = incoming.kind === 'message' ? incoming.message.metadata : incoming.kind === 'draft' ? incoming.metadata : undefined
  return metadata ? { metadata } : {}
}

/** The start of a conversation as an event id (and the seed of its replies' ids): one per conversation. */
function startedId(conversation: Pick<ConversationRow, 'integrationId' | 'id'>): string {
  return `started:${conversation.integrationId}:${conversation.id}`
}

/**
 * Runs bot code for conversations. The conversation's own signal log is the work queue: every
 * incoming message or event after the conversation's bot cursor is a turn, processed in sequence
 * order, one conversation at a time (different conversations in parallel). The cursor moves only
 * after a turn ends, so after a restart unfinished turns run again; their replies have
 * deterministic ids, so a user never gets one twice.
 */
export class BotRuntime implements IncomingInterceptor {
  private readonly clock: () => number
  private readonly turns = new SerialByKey(() => this.stopped)
  private readonly summaries = new Map<string, Promise<BotSummary | undefined>>()
  private readonly owners = new Map<string, { at: number; owner: Promise<{ bot: BotRow; integration: IntegrationRow } | undefined> }>()
  private readonly unsubscribes: (() => Promise<void>)[] = []
  private stopped = false
  private sweeper: NodeJS.Timeout | undefined
  /** This instance's name on conversation leases. */
  private readonly instanceId = uuidv7()
  private readonly runs: Counter
  private readonly sourceMaps = new Map<string, { deployedAt: BotRow['deployedAt']; map: SourceMap | undefined }>()
  private readonly failures: Counter
  private readonly runSeconds: Histogram

  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly sandbox: BotSandbox,
    private readonly options: BotRuntimeOptions,
  ) {
    this.clock = options.clock ?? Date.now
    const metrics = options.metrics ?? new MetricsRegistry()
    this.runs = metrics.counter('parley_bot_turns_total',
      'Runs of bot code in the sandbox by kind (message, event, start, webhook, bot_event, action, before_incoming) and outcome (ok, failed)', ['kind', 'outcome'])
    this.failures = metrics.counter('parley_bot_failures_total',
      'Failed runs of bot code by kind and reason: error (the code threw), timeout (PARLEY_BOT_TIMEOUT_MS / PARLEY_BOT_TURN_TIMEOUT_MS), memory (PARLEY_BOT_MEMORY_MB), crashed', ['kind', 'reason'])
    this.runSeconds = metrics.histogram('parley_bot_turn_duration_seconds', 'Wall time of runs of bot code in the sandbox by kind, in seconds', TURN_BUCKETS, ['kind'])
    metrics.collect('parley_bot_conversations_behind',
      `Conversations with incoming messages or events their bot has not processed yet (the bot runtime's queue depth, all instances; counted up to ${BEHIND_COUNT_CAP})`,
      async () => (await store.conversationsBehind(BEHIND_COUNT_CAP)).length)
    metrics.collect('parley_bot_conversations_running', 'Conversations whose turns this instance is running or about to run', () => this.turns.size)
    const remote = options.remote
    this.remoteTurns = remote && {
      leaseMs: () => remote.leaseMs(),
      admit: (bot) => remote.admit(botEndpoint(bot)),
      turn: async (bot, integration, incoming) => {
        // The start of a conversation runs a sandboxed bot's conversationStarted triggers; a remote bot gets no such turn.
        if (incoming.kind === 'started') return { states: [], logs: [], ownSeqs: [] }
        const event = await conversationEvent(remote.views, bot, integration, incoming)
        const { logs, failure } = await remote.deliver(bot, event, event.conversationId ?? null)
        // Not delivered: timed out (no answer within the budget), else failed (an error answer, or never processed).
        return { states: [], logs, ownSeqs: [], failure: failure && (failure === 'timeout' ? 'timeout' : 'error') }
      },
    }
  }

  private botChat: BotChatService | undefined
  /** The domain behind the sandboxed bot's client (compose.ts attaches it: ChatService, which it builds on, needs the runtime first). */
  private tables: TablesService | undefined

  /** The Tables API service behind the sandboxed client's table operations (compose.ts). */
  private integrationActions?: (bot: BotRow, type: string, input: JsonObject) => Promise<Record<string, unknown> | undefined>

  /** callAction of `alias:action` on an installed integration (action_triggered); undefined when `type` names none. */
  useIntegrationActions(fn: (bot: BotRow, type: string, input: JsonObject) => Promise<Record<string, unknown> | undefined>): void {
    this.integrationActions = fn
  }

  attachTables(tables: TablesService): void {
    this.tables = tables
  }

  attachDomain(botChat: BotChatService): void {
    this.botChat = botChat
  }

  private handoffs: HandoffService | undefined

  /** Human handoff (compose.ts): a handed-off conversation's messages run no turns; client.startHandoff / endHandoff. */
  attachHandoffs(handoffs: HandoffService): void {
    this.handoffs = handoffs
  }

  /**
   * Whether an incoming message or event is for a person instead of the bot: it was written while a handoff of
   * its conversation was open (by its createdAt, not the handoff's state now: a message written during a handoff
   * stays the agent's even when the runtime reaches it after the handoff ended). The handoff's own marker events
   * (handoff_started / handoff_ended) always run a turn.
   */
  private async forAgent(integrationId: string, conversationId: string, incoming: Incoming): Promise<boolean> {
    if (!this.handoffs || incoming.kind === 'started') return false
    if (incoming.kind === 'event' && handoffEventType(incoming.event)) return false
    const at = incoming.kind === 'message' ? incoming.message.createdAt : incoming.event.createdAt
    return this.handoffs.handedOffAt(integrationId, conversationId, at)
  }

  private domain(): BotChatService {
    if (!this.botChat) throw new Error('BotRuntime: no BotChatService attached (compose.ts attachDomain)')
    return this.botChat
  }

  async start(): Promise<void> {
    this.unsubscribes.push(
      await this.pubsub.subscribe(TURNS_CHANNEL, (message) => {
        const [integrationId, conversationId] = JSON.parse(message) as [string, string]
        this.schedule(integrationId, conversationId)
      }),
      await this.pubsub.subscribe(BOTS_CHANNEL, (botId) => this.forget(botId)),
    )
    // Work left by a previous run of the process, then periodically: what another instance left behind.
    await this.sweep()
    const stopListening = this.pubsub.onReconnect?.(() => void this.sweep().catch(() => {}))
    if (stopListening) this.unsubscribes.push(async () => stopListening())
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), this.options.sweepMs ?? 5_000)
    this.sweeper.unref()
  }

  private readonly sandboxTurns: TurnExecutor = {
    leaseMs: (bot) => this.limitsOf(bot).timeoutMs + 10_000,
    admit: async () => () => {},
    turn: (bot, integration, incoming, loaded) => this.turn(bot, integration, incoming, loaded),
  }

  private readonly remoteTurns: TurnExecutor | undefined

  /** The executor of a bot's turns: remote when it has a url, else the sandbox. */
  private executorOf(bot: BotRow): TurnExecutor | undefined {
    return bot.url !== null ? this.remoteTurns : bot.code !== null ? this.sandboxTurns : undefined
  }

  private async sweep(): Promise<void> {
    for (const { integrationId, conversationId } of await this.store.conversationsBehind(1_000)) this.schedule(integrationId, conversationId)
  }

  /** Leases outlive the bot's longest turn, so a live owner never loses one mid-turn. */
  private leaseMs(bot: BotRow): number {
    return (this.executorOf(bot) ?? this.sandboxTurns).leaseMs(bot)
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.sweeper)
    this.options.remote?.stop()
    await Promise.all(this.unsubscribes.splice(0).map((u) => u()))
    await this.turns.allIdle()
  }

  /** The notification announcing new incoming work in a conversation, sent with the user's message or event (none if the bot has no code). */
  async turnNotification(integrationId: string, conversationId: string): Promise<AppendNotification | undefined> {
    // A bot without code or url has nothing to run (its first deploy fast-forwards the cursors).
    const owner = await this.botOf(integrationId)
    if (!owner || !hasTurns(owner.bot)) return undefined
    return { channel: TURNS_CHANNEL, message: JSON.stringify([integrationId, conversationId]) }
  }

  /** Called when a bot changes anywhere: every instance drops its cached copy. */
  async botChanged(botId: string): Promise<void> {
    this.forget(botId)
    await this.pubsub.publish(BOTS_CHANNEL, botId)
  }

  /** Bots change rarely: any change drops the whole cache (and the Chat API's integration cache). */
  private forget(botId: string): void {
    this.owners.clear()
    this.options.onBotsChanged?.(botId)
  }


  /** Resolves when the conversation has no turn running or pending (tests, shutdown). */
  async idle(integrationId: string, conversationId: string): Promise<void> {
    await this.turns.idle(`${integrationId}:${conversationId}`)
  }

  private schedule(integrationId: string, conversationId: string): void {
    this.turns.schedule(`${integrationId}:${conversationId}`, () => this.drain(integrationId, conversationId))
  }

  /** The bot's export summary for its current code, loaded once per deployed version. */
  async summary(bot: BotRow): Promise<BotSummary | undefined> {
    if (bot.code === null) return undefined
    const key = `${bot.id}@${bot.deployedAt}`
    let summary = this.summaries.get(key)
    if (!summary) {
      summary = this.sandbox.check(bot.code).then((r) => (r.ok ? r.summary : undefined))
      this.summaries.set(key, summary)
    }
    return summary
  }

  /** The bot behind an integration, cached (every message needs it; it changes only on deploys). */
  private botOf(integrationId: string): Promise<{ bot: BotRow; integration: IntegrationRow } | undefined> {
    const cached = this.owners.get(integrationId)
    if (cached && this.clock() - cached.at < BOT_CACHE_TTL_MS) return cached.owner
    const owner = (async () => {
      const integration = await this.store.getIntegration(integrationId)
      const bot = integration && (await this.store.getBot(integration.botId))
      return bot && integration ? { bot, integration } : undefined
    })()
    this.owners.set(integrationId, { at: this.clock(), owner })
    owner.catch(() => this.owners.delete(integrationId))
    return owner
  }

  /**
   * Runs the conversation's pending turns under its lease. Another instance holding the lease is
   * running them already; a dead instance's lease expires and the sweep takes the work over (its
   * unfinished turn runs again, and deterministic reply ids keep the user from seeing a reply twice).
   */
  private async drain(integrationId: string, conversationId: string): Promise<void> {
    const owner = await this.botOf(integrationId)
    if (!owner) return
    // Room first (a remote bot's slots), then the lease: waiting for room holds no lease.
    const release = await (this.executorOf(owner.bot) ?? this.sandboxTurns).admit(owner.bot)
    let cursor: BotCursor | undefined
    try {
      if (this.stopped) return
      const claimed = await this.store.claimBotConversation(integrationId, conversationId, this.instanceId, this.clock(), this.leaseMs(owner.bot))
      if (!claimed) return
      try {
        await this.runPending(owner.bot, owner.integration, conversationId, claimed)
      } finally {
        cursor = await this.store.releaseBotConversation(integrationId, conversationId, this.instanceId)
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
   * the next turn, or once at the end.
   */
  private async runPending(bot: BotRow, integration: IntegrationRow, conversationId: string, cursor: BotCursor): Promise<void> {
    const executor = this.executorOf(bot)
    if (!executor) {
      // No code deployed and no url: nothing to run, and nothing to replay later when code arrives.
      await this.store.advanceBotCursor(integration.id, conversationId, cursor.lastSeq)
      return
    }
    let position = cursor.botSeq
    let saved = position
    let renewedAt = this.clock()
    // The start turn runs the bot's own conversationStarted triggers: sandboxed bots only (a remote bot has no such triggers).
    // Checked with the first turn's own read of its states (the flow record says `started`), or alone when no turn comes.
    let startPending = executor === this.sandboxTurns
    for (;;) {
      const batch = await this.store.signalsSince(integration.id, conversationId, position, TURN_BATCH)
      for (const signal of batch) {
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
          loaded = await this.loadState(bot, integration.id, conversationId, incoming.kind === 'message' ? incoming.message.userId : incoming.event.userId)
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
        const end = { botId: bot.id, integrationId: integration.id, conversationId, seq: position, now, ...(renew && { lease: { owner: this.instanceId, ttlMs: this.leaseMs(bot) } }) }
        try {
          await this.store.finishBotTurn({ ...end, states, logs })
        } catch (err) {
          // The turn ran (its replies are sent): record why its state was not saved and move on, as for a failed turn.
          await this.store.appendBotLogs([...logs, this.failureLog(bot, conversationId, 'Saving the turn', err)]).catch(() => {})
          await this.store.finishBotTurn({ ...end, states: [], logs: [] })
        }
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
  }

  /**
   * The conversation's start, its own turn before anything the user sent: a conversation created by a
   * user (the Chat API, hence the webchat and `parley chat`) that the bot has not started yet runs the
   * bot's `conversationStarted` triggers (its greeting), so that the greeting arrives when the chat
   * opens and the first message is answered for what it says. Runs once: the flow record then says
   * `started` (as it does after any turn). A conversation the bot created (no owner) has no start.
   */
  private async startTurn(bot: BotRow, integration: IntegrationRow, conversationId: string, position: number): Promise<boolean> {
    const flowKey: BotStateKey = { scope: 'flow', scopeId: `${integration.id}:${conversationId}` }
    const [flow] = await this.store.getBotStates(bot.id, [flowKey])
    if (isStarted(flow)) return false
    const conversation = await this.store.getConversation(integration.id, conversationId)
    if (!conversation || conversation.ownerId === null) return false
    const ownerId = conversation.ownerId
    const started: Incoming = { kind: 'started', conversation: { ...conversation, ownerId } }
    const { states, logs, failure } = await this.typingWhile(integration.id, conversationId, () => this.turn(bot, integration, started))
    if (failure) await this.recordTurnFailure(bot, conversationId, started, failure)
    const end = { botId: bot.id, integrationId: integration.id, conversationId, seq: position, now: this.clock() }
    try {
      await this.store.finishBotTurn({ ...end, states, logs })
      return true
    } catch (err) {
      await this.store.appendBotLogs([...logs, this.failureLog(bot, conversationId, 'Saving the turn', err)]).catch(() => {})
      return false
    }
  }

  /**
   * The conversation's streams show the bot typing while `work` (a turn) runs: a `typing` notification on the
   * conversation's channel at the start, renewed every TYPING_RENEW_MS (so a stream opened meanwhile, on any
   * instance, learns it), and a stop at the end. Best effort: a lost notification expires after TYPING_TTL_MS.
   */
  private async typingWhile<T>(integrationId: string, conversationId: string, work: () => Promise<T>): Promise<T> {
    const publish = (active: boolean) => void publishTyping(this.pubsub, integrationId, conversationId, active, TYPING_TTL_MS).catch(() => {})
    publish(true)
    const renew = setInterval(() => publish(true), TYPING_RENEW_MS)
    renew.unref()
    try {
      return await work()
    } finally {
      clearInterval(renew)
      publish(false)
    }
  }

  /** The instance's limits, with the bot's own maxExecutionTime (seconds) as its per-run budget. */
  private limitsOf(bot: BotRow): SandboxLimits {
    const { limits } = this.options
    if (bot.maxExecutionTime === null) return limits
    const budgetMs = bot.maxExecutionTime * 1000
    return { ...limits, budgetMs, timeoutMs: Math.max(limits.timeoutMs, budgetMs) }
  }

  // ---- the event object ----

  private stateKeys(integrationId: string, conversationId: string, userId: string): BotStateKey[] {
    return [
      { scope: 'user', scopeId: `${integrationId}:${userId}` },
      { scope: 'conversation', scopeId: `${integrationId}:${conversationId}` },
      { scope: 'bot', scopeId: '' },
      { scope: 'flow', scopeId: `${integrationId}:${conversationId}` },
    ]
  }

  /** The spec's event object for an incoming message or custom event. */
  buildEvent(bot: BotRow, integration: IntegrationRow, incoming: Incoming | (IncomingDraft & { kind: 'draft'; createdAt: number }), state: TurnInput['event']['state']): TurnInput['event'] {
    const base =
      incoming.kind === 'started'
        ? { id: startedId(incoming.conversation), conversationId: incoming.conversation.id, userId: incoming.conversation.ownerId, payload: {} as JsonObject, createdAt: incoming.conversation.createdAt, messageId: undefined, custom: false }
        : incoming.kind === 'message'
        ? { id: incoming.message.id, conversationId: incoming.message.conversationId, userId: incoming.message.userId, payload: incoming.message.payload, createdAt: incoming.message.createdAt, messageId: incoming.message.id as string | undefined, custom: false }
        : incoming.kind === 'event'
          ? { id: incoming.event.id, conversationId: incoming.event.conversationId, userId: incoming.event.userId, payload: incoming.event.payload, createdAt: incoming.event.createdAt, messageId: undefined, custom: true }
          : { id: incoming.id, conversationId: incoming.conversationId, userId: incoming.userId, payload: incoming.payload, createdAt: incoming.createdAt, messageId: incoming.custom ? undefined : incoming.id, custom: incoming.custom }
    return {
      botId: bot.id,
      conversationId: base.conversationId,
      createdOn: new Date(base.createdAt).toISOString(),
      direction: 'incoming',
      id: base.id,
      integration: integration.name,
      ...(base.messageId !== undefined && { messageId: base.messageId }),
      // A user's message's metadata (the Chat API's `metadata`), beside the payload as the sandboxed client shows it.
      ...messageMetadata(incoming),
      payload: base.payload,
      preview: previewOf(base.payload),
      state,
      tags: { conversation: {}, message: {}, user: {} },
      type: incoming.kind === 'started' ? 'conversationStarted'
        : (incoming.kind === 'event' && handoffEventType(incoming.event)) || (base.custom ? 'custom' : String(base.payload.type)),
      userId: base.userId,
    }
  }

  private async loadState(bot: BotRow, integrationId: string, conversationId: string, userId: string): Promise<LoadedState> {
    const keys = this.stateKeys(integrationId, conversationId, userId)
    const [user, conversation, botState, flow] = await this.store.getBotStates(bot.id, keys)
    // Workflow variables live with the conversation's flow position, so a capture's answers survive between turns.
    const workflow = ((flow as { workflow?: JsonObject } | undefined)?.workflow ?? {}) as JsonObject
    return { keys, state: { user: user ?? {}, conversation: conversation ?? {}, bot: botState ?? {}, workflow }, flow }
  }

  // ---- running code ----

  private host(bot: BotRow, integration: IntegrationRow, conversationId: string | null, sourceId: string): SandboxHost & { flush(): Promise<void>; takeLogs(): BotLogRow[]; ownSeqs: number[] } {
    const logs: BotLogRow[] = []
    /** Sequence numbers of what the bot appended to the run's own conversation. */
    const ownSeqs: number[] = []
    let replies = 0
    let events = 0
    let searches = 0
    const domain = this.domain()
    const ownConversation = async (id: unknown) => {
      if (typeof id !== 'string') throw errors.invalidPayload('conversationId must be a string')
      const conversation = await this.store.getConversation(integration.id, id)
      if (!conversation) throw errors.notFound('Conversation', id)
      return conversation
    }
    /** Writing needs only the id: the run's own conversation is known to be the integration's (appends fail if it was deleted). */
    const ownConversationId = async (id: unknown): Promise<{ id: string }> =>
      conversationId !== null && id === conversationId ? { id: conversationId } : ownConversation(id)
    /**
     * Where createMessage writes: the run's integration's conversation, or one of the bot's other integrations'
     * (a conversation the bot started on an installed integration's channel: its message goes out there).
     */
    const writableConversation = async (id: unknown): Promise<{ conversation: { id: string }; into: IntegrationRow }> => {
      if (conversationId !== null && id === conversationId) return { conversation: { id: conversationId }, into: integration }
      if (typeof id !== 'string') throw errors.invalidPayload('conversationId must be a string')
      if (await this.store.getConversation(integration.id, id)) return { conversation: { id }, into: integration }
      const found = await domain.getConversation(bot, id)
      const into = (await this.store.listIntegrations(bot.id)).find((i) => i.id === found.integrationId)
      if (!into) throw errors.notFound('Conversation', id)
      return { conversation: { id }, into }
    }
    const call = async (method: string, args: unknown): Promise<unknown> => {
      const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>
      const tableCall = this.tables && sandboxTableCall(this.tables, bot, method, a)
      if (tableCall) return tableCall
      const runtimeCall = sandboxRuntimeCall(domain, bot, method, a)
      if (runtimeCall) return runtimeCall
      switch (method) {
        case 'createMessage': {
          const { conversation, into } = await writableConversation(a.conversationId)
          const problem = this.options.validatePayload(a.payload)
          if (problem) throw errors.invalidPayload(problem)
          const tags = optionalTags(a.tags)
          // Deterministic: a turn run again (after a crash, or moved off a stopped worker) finds its reply instead of sending it twice.
          const id = replyId(sourceId, replies++)
          const metadata = typeof a.metadata === 'object' && a.metadata !== null ? (a.metadata as JsonObject) : null
          const { row: message, created } = await domain.appendOutgoing(into, conversation.id, id, a.payload as JsonObject, metadata)
          if (created && message.conversationId === conversationId) ownSeqs.push(message.seq)
          if (created && tags) await domain.tagMessage(into, message.id, tags)
          return { message: sandboxMessageView({ ...message, tags: tags ?? {}, updatedAt: message.createdAt }) }
        }
        case 'createEvent': {
          const conversation = await ownConversationId(a.conversationId)
          if (typeof a.payload !== 'object' || a.payload === null || Array.isArray(a.payload)) throw errors.invalidPayload('payload must be an object')
          // Deterministic too: a turn run again (after a crash, or moved off a stopped worker) creates it once.
          const id = replyId(`${sourceId}:event`, events++)
          const { row: event, created } = await domain.appendBotEvent(integration, conversation.id, id, a.payload as JsonObject)
          if (created && event.conversationId === conversationId) ownSeqs.push(event.seq)
          return { event: eventView(event) }
        }
        case 'callAction': {
          // An action of an installed integration (`alias:action`), through the same path as the Runtime API's callAction.
          if (typeof a.type !== 'string' || a.type === '') throw errors.invalidPayload('client.callAction: type must be a non-empty string ("alias:action")')
          const input = a.input ?? {}
          if (typeof input !== 'object' || input === null || Array.isArray(input)) throw errors.invalidPayload('client.callAction: input must be an object')
          const colon = a.type.indexOf(':')
          if (colon <= 0) throw errors.invalidPayload(`client.callAction: "${a.type.slice(0, 200)}" is not an integration action: name it "alias:action" (the alias the integration is installed as)`)
          // Never undefined for `alias:action` (an alias the bot has no integration of is a 404 there).
          const output = await this.integrationActions?.(bot, a.type, input as JsonObject)
          return { output: output ?? {}, meta: { cached: false } }
        }
        case 'startTypingIndicator':
        case 'stopTypingIndicator': {
          const conversation = await ownConversationId(a.conversationId)
          const timeout = typeof a.timeout === 'number' && Number.isFinite(a.timeout) ? Math.min(MAX_TYPING_TIMEOUT_MS, Math.max(1, Math.trunc(a.timeout))) : TYPING_TTL_MS
          await publishTyping(this.pubsub, integration.id, conversation.id, method === 'startTypingIndicator', timeout)
          return {}
        }
                case 'getMessage':
          return { message: sandboxMessageView(await domain.getMessage(bot, String(a.id))) }
        case 'listMessages': {
          const conversation = await ownConversation(a.conversationId)
          const page = await domain.listMessages(bot, {
            conversationId: conversation.id, nextToken: typeof a.nextToken === 'string' ? a.nextToken : undefined,
            pageSize: typeof a.pageSize === 'number' ? a.pageSize : CHAT_PAGE_SIZE,
          })
          return { messages: page.items.map(sandboxMessageView), meta: { ...(page.next && { nextToken: page.next }) } }
        }
        case 'getConversation':
          await ownConversation(a.id)
          return { conversation: runtimeConversationView(await domain.getConversation(bot, String(a.id))) }
        case 'getUser':
          return { user: sandboxUserView(await domain.getUser(bot, String(a.id))) }
        case 'startHandoff':
        case 'endHandoff': {
          if (!this.handoffs) throw errors.invalidPayload('Human handoff is not available on this instance')
          const conversation = await ownConversationId(a.conversationId)
          if (method === 'endHandoff') return { handoff: await this.handoffs.endForBot(bot, conversation.id) }
          if (a.reason !== undefined && typeof a.reason !== 'string') throw errors.invalidPayload('reason must be a string')
          const userId = typeof a.userId === 'string' ? a.userId : undefined
          return { handoff: await this.handoffs.startForBot(bot, conversation.id, { reason: a.reason as string | undefined, userId }) }
        }
        case 'searchKnowledge': {
          const { answer, bestRelevance } = await searchForBotScored(this.store, bot.id, a, this.clock(), this.options.semanticRanking, this.options.kbMinScore ?? 0)
          // Recorded for the dashboard (unanswered questions); its id is the turn's and the search's place in it.
          await this.store.quality.recordKnowledgeSearch({
            botId: bot.id, id: replyId(`${sourceId}:kb`, searches++), conversationId, query: String(a.query), noAnswer: answer.noAnswer,
            bestRelevance, createdAt: this.clock(),
          }).catch(() => {})
          return answer
        }
        case 'composeKnowledgeAnswer': {
          const results = Array.isArray(a.results) ? (a.results as KbResult[]).slice(0, 10) : []
          const text = this.options.composeAnswer && typeof a.question === 'string' && results.length > 0 ? await this.options.composeAnswer(a.question, results) : undefined
          return { text: text ?? null }
        }
        default:
          throw errors.invalidPayload(`Unknown client method "${method}"`)
      }
    }
    return {
      call,
      log: (level: LogLevel, text: string) => {
        logs.push({ id: uuidv7(), botId: bot.id, at: this.clock(), level, message: mapDeployedPositions(text, this.sourceMapOf(bot)), conversationId })
      },
      flush: async () => {
        const rows = logs.splice(0)
        await this.store.appendBotLogs(rows).catch(() => {})
      },
      takeLogs: () => logs.splice(0),
      // Started again from the beginning (moved to another worker): its replies count from 0 again, so that
      // each gets the id it had the first time (and is found, not sent twice).
      restarted: () => {
        replies = 0
        events = 0
        searches = 0
      },
      ownSeqs,
    }
  }

  /** Counts one sandbox run (since `startedAt`) and its outcome: undefined = ok. */
  private observeRun(kind: RunKind, startedAt: number, failure: RunFailure | undefined): void {
    this.runSeconds.observe((performance.now() - startedAt) / 1000, { kind })
    this.runs.inc({ kind, outcome: failure ? 'failed' : 'ok' })
    if (failure) this.failures.inc({ kind, reason: failure })
  }

  /** The reason of a run that ended with errors of the bot code (caught in the sandbox): a unit's time budget, or what it threw. */
  private static reasonOf(errors: string[] | undefined): RunFailure | undefined {
    if (!errors?.length) return undefined
    return errors.some((e) => BUDGET_EXCEEDED.test(e)) ? 'timeout' : 'error'
  }

  /** The reason of a run's failure: the sandbox's stop, or `error` for what the code threw. */
  private static failureOf(err: unknown): RunFailure {
    return err instanceof SandboxError && err.kind !== 'error' ? err.kind : 'error'
  }

  /** The deployed code's inline source map (`parley deploy` adds one), parsed once per deployed version. */
  private sourceMapOf(bot: BotRow): SourceMap | undefined {
    if (bot.code === null) return undefined
    const cached = this.sourceMaps.get(bot.id)
    if (cached?.deployedAt === bot.deployedAt) return cached.map
    const map = SourceMap.fromCode(bot.code)
    this.sourceMaps.set(bot.id, { deployedAt: bot.deployedAt, map })
    return map
  }

  private failureLog(bot: BotRow, conversationId: string | null, what: string, err: unknown): BotLogRow {
    // Limits are named with the setting that raises them.
    const limit = err instanceof SandboxError
      ? err.kind === 'timeout' ? ` (the whole turn's limit is ${this.options.limits.timeoutMs} ms: PARLEY_BOT_TURN_TIMEOUT_MS; each hook, card or action has ${this.limitsOf(bot).budgetMs} ms: PARLEY_BOT_TIMEOUT_MS)`
        : err.kind === 'memory' ? ` (the limit is ${Math.round(this.options.limits.memoryBytes / 1024 / 1024)} MB: PARLEY_BOT_MEMORY_MB)` : ''
      : ''
    const message = err instanceof SandboxError ? `${what} ${err.kind === 'timeout' ? 'timed out' : err.kind === 'memory' ? 'ran out of memory' : 'failed'}: ${err.message}${limit}` : `${what} failed: ${(err as Error).message}`
    return { id: uuidv7(), botId: bot.id, at: this.clock(), level: 'error', message: mapDeployedPositions(message, this.sourceMapOf(bot)), conversationId }
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

  private async recordFailure(bot: BotRow, conversationId: string | null, what: string, err: unknown): Promise<void> {
    await this.store.appendBotLogs([this.failureLog(bot, conversationId, what, err)]).catch(() => {})
  }

  /** Runs one turn; what it leaves to save (states, logs) is saved by the caller with the cursor, in one transaction. */
  private async turn(bot: BotRow, integration: IntegrationRow, incoming: Incoming, loaded?: LoadedState): Promise<TurnResult> {
    const { conversationId, userId, sourceId } =
      incoming.kind === 'message' ? { conversationId: incoming.message.conversationId, userId: incoming.message.userId, sourceId: incoming.message.id }
      : incoming.kind === 'event' ? { conversationId: incoming.event.conversationId, userId: incoming.event.userId, sourceId: incoming.event.id }
      : { conversationId: incoming.conversation.id, userId: incoming.conversation.ownerId, sourceId: startedId(incoming.conversation) }
    const { keys, state, flow } = loaded ?? (await this.loadState(bot, integration.id, conversationId, userId))
    const flowRecord = (flow ?? {}) as { started?: boolean; flow?: TurnInput['flow'] }
    const event = this.buildEvent(bot, integration, incoming, state)
    // An installed integration's event in a conversation (createEvent with its key): the bot sees its type, `alias:event`.
    if (incoming.kind === 'event' && event.type === 'custom') {
      const created = await this.store.runtimeEvents.get(bot.id, incoming.event.id)
      if (created?.type.includes(':')) event.type = created.type
    }
    const input: TurnInput = {
      event,
      flow: flowRecord.flow ?? null,
      conversationStarted: incoming.kind === 'started',
      budgetMs: this.limitsOf(bot).budgetMs,
    }
    const host = this.host(bot, integration, conversationId, sourceId)
    const kind: RunKind = incoming.kind === 'started' ? 'start' : incoming.kind
    const startedAt = performance.now()
    try {
      const output = JSON.parse(await this.sandbox.run(
        { botId: bot.id, version: String(bot.deployedAt), code: bot.code!, entry: 'turn', input: JSON.stringify(input), limits: this.limitsOf(bot) },
        host,
      )) as TurnOutput
      const failure = BotRuntime.reasonOf(output.errors)
      this.observeRun(kind, startedAt, failure)
      // output.errors were already written to the log by the in-sandbox runtime (host.log).
      const [userKey, conversationKey, botKey, flowKey] = keys as [BotStateKey, BotStateKey, BotStateKey, BotStateKey]
      const states: BotStateWrite[] = [
        { ...userKey, patch: diffState(state.user, (output.state?.user ?? {}) as JsonObject) },
        { ...conversationKey, patch: diffState(state.conversation, (output.state?.conversation ?? {}) as JsonObject) },
        { ...botKey, patch: diffState(state.bot, (output.state?.bot ?? {}) as JsonObject) },
        { ...flowKey, data: { started: true, flow: (output.flow ?? null) as JsonObject | null, workflow: (output.state?.workflow ?? {}) as JsonObject } },
      ]
      return { states, logs: host.takeLogs(), ownSeqs: host.ownSeqs, failure }
    } catch (err) {
      const failure = BotRuntime.failureOf(err)
      this.observeRun(kind, startedAt, failure)
      return { states: [], logs: [...host.takeLogs(), this.failureLog(bot, conversationId, incoming.kind === 'started' ? 'Turn for the conversation start' : `Turn for ${incoming.kind} ${sourceId}`, err)], ownSeqs: host.ownSeqs, failure }
    }
  }

  /**
   * A turn for a webhook delivery (the event: src/runtime/webhook-events.ts). It has no conversation,
   * so only the bot-wide state persists; `extension` adds host calls (client.readWebhookBody). The
   * client acts on the bot's chat integration when it has one, so a webhook can message a conversation.
   */
  async webhookTurn(integration: IntegrationRow, source: WebhookEventSource, extension?: HostExtension): Promise<void> {
    const bot = (await this.botOf(integration.id))?.bot
    if (bot?.url != null) {
      // A remote bot gets it as a bot-level `webhook:event` (payload as the sandbox sees it; no client.readWebhookBody).
      await this.options.remote?.deliverBotEvent(bot, {
        id: source.id, type: `${integration.name}:event`, payload: source.payload, createdAt: new Date(source.createdAt).toISOString(), status: 'pending', failureReason: null,
      })
      return
    }
    if (!bot?.code) return
    const botKey: BotStateKey = { scope: 'bot', scopeId: '' }
    const [botState] = await this.store.getBotStates(bot.id, [botKey])
    const state = { user: {}, conversation: {}, bot: botState ?? {}, workflow: {} }
    const input: TurnInput = { event: webhookEvent(bot, integration, source, state), flow: null, conversationStarted: false, budgetMs: this.limitsOf(bot).budgetMs }
    const chat = (await this.store.listIntegrations(bot.id)).find((i) => i.name === 'chat' && i.enabled)
    const host = withExtension(this.host(bot, chat ?? integration, null, source.id), extension)
    const startedAt = performance.now()
    try {
      const output = JSON.parse(await this.sandbox.run(
        { botId: bot.id, version: String(bot.deployedAt), code: bot.code, entry: 'turn', input: JSON.stringify(input), limits: this.limitsOf(bot) },
        host,
      )) as TurnOutput
      this.observeRun('webhook', startedAt, BotRuntime.reasonOf(output.errors))
      await this.store.saveBotStates(bot.id, [{ ...botKey, patch: diffState(state.bot, (output.state?.bot ?? {}) as JsonObject) }], this.clock())
    } catch (err) {
      this.observeRun('webhook', startedAt, BotRuntime.failureOf(err))
      await this.recordFailure(bot, null, `Turn for webhook ${source.id}`, err)
    } finally {
      await host.flush()
    }
  }

  /**
   * callAction: `alias:action` to the bot's integration of that alias (IntegrationOperations, never the bot's url);
   * else the bot's action `type` (one its definition declares: checkDeclaredAction) with `input`, run where its turns run: POSTed to its url
   * (`action_triggered`, the SDK answers `{ output }`), or in the sandbox (the deployed module's
   * `actions`, under the bot's per-run budget). Unknown action → 404; a failing action → 400 Runtime;
   * a remote bot that does not answer in time → 504. The output is a JSON object of at most 1 MB.
   */
  async callAction(bot: BotRow, type: string, input: JsonObject): Promise<JsonObject> {
    const fromIntegration = await this.integrationActions?.(bot, type, input)
    if (fromIntegration !== undefined) return fromIntegration as JsonObject
    checkDeclaredAction(bot, type)
    if (bot.url !== null) {
      const remote = this.options.remote
      if (!remote) throw errors.runtime('Remote bots are not enabled on this instance')
      let answer: { status: number; body: string }
      try {
        answer = await remote.callAction(bot, type, input)
      } catch (err) {
        throw refusedError(err, `Action "${type}" was not sent to the bot`) ?? unansweredError(`The bot at its url did not answer action "${type}"`, err)
      }
      let body: unknown
      try {
        body = JSON.parse(answer.body)
      } catch {
        body = undefined
      }
      if (answer.status < 200 || answer.status >= 300) {
        // Its status only, never the answer's body: the url may not be a bot at all (README "Outbound requests").
        const message = (body as { message?: unknown } | undefined)?.message
        if (typeof message === 'string' && /Action .* not found/.test(message)) throw errors.notFound('Action', type)
        throw errors.runtime(`Action "${type}" failed in the bot (it ${answeredStatus(answer.status)})`)
      }
      const output = (body as { output?: unknown })?.output
      if (typeof output !== 'object' || output === null || Array.isArray(output)) throw errors.runtime(`Action "${type}": the bot's answer has no JSON object \`output\``)
      return output as JsonObject
    }
    if (bot.code === null) throw errors.notFound('Action', type)
    const [botState] = await this.store.getBotStates(bot.id, [{ scope: 'bot', scopeId: '' }])
    const chat = (await this.store.listIntegrations(bot.id)).find((i) => i.name === 'chat' && i.enabled)
    const id = uuidv7()
    const event = {
      botId: bot.id, createdOn: new Date(this.clock()).toISOString(), direction: 'incoming', id, integration: chat?.name ?? 'chat', payload: { type, input },
      preview: `action ${type}`, state: { user: {}, conversation: {}, bot: botState ?? {}, workflow: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'action',
    }
    const host = this.host(bot, chat ?? ({ id: '', botId: bot.id, name: 'chat' } as IntegrationRow), null, `action:${id}`)
    let raw: string
    const startedAt = performance.now()
    try {
      raw = await this.sandbox.run(
        { botId: bot.id, version: String(bot.deployedAt), code: bot.code, entry: 'action', input: JSON.stringify({ event, type, input, budgetMs: this.limitsOf(bot).budgetMs }), limits: this.limitsOf(bot) },
        host,
      )
    } catch (err) {
      this.observeRun('action', startedAt, BotRuntime.failureOf(err))
      await this.recordFailure(bot, null, `Action ${type}`, err)
      throw errors.runtime(this.failureLog(bot, null, `Action "${type}"`, err).message)
    } finally {
      await host.flush()
    }
    if (raw.length > MAX_ACTION_OUTPUT) throw errors.runtime(`Action "${type}": its output is larger than ${MAX_ACTION_OUTPUT} bytes`)
    const result = JSON.parse(raw) as { output?: JsonObject; error?: string; unknown?: boolean; errors?: string[] }
    this.observeRun('action', startedAt, result.error !== undefined && !result.unknown ? BotRuntime.reasonOf([...(result.errors ?? []), result.error]) : undefined)
    if (result.unknown) throw errors.notFound('Action', type)
    if (result.error !== undefined || !result.output) throw errors.runtime(`Action "${type}" failed: ${result.error ?? 'no output'}`)
    return result.output
  }

  /**
   * Delivers a bot-level event (no conversation: src/runtime/bot-events.ts) to its bot; the seam
   * RuntimeEventService calls for every such event it claims. A sandboxed bot runs a bot-level turn
   * as for a webhook: its hooks see the event (`type` as created), only state.bot persists, and its
   * client acts on the bot's chat integration. Resolves with the outcome (a bot without code ignores
   * it; a failing turn is `failed`, its error in the bot's logs); rejects only when the outcome is
   * unknown (the event is then delivered again once its lease expires).
   */
  async deliverBotEvent(event: BotLevelEvent): Promise<BotEventOutcome> {
    const bot = await this.store.getBot(event.botId)
    if (!bot) return { status: 'ignored', reason: 'The bot no longer exists' }
    if (bot.url !== null && this.options.remote) {
      // A remote bot: `event_received` with x-bp-type = the event's type (state_expired: payload { state }).
      return this.options.remote.deliverBotLevel(bot, {
        id: event.id, type: event.type, payload: event.payload, createdAt: new Date(event.createdAt).toISOString(), status: 'pending', failureReason: null,
        ...(event.userId !== null && { userId: event.userId }),
        ...(event.messageId !== null && { messageId: event.messageId }),
        ...(event.conversationId != null && { conversationId: event.conversationId }),
      })
    }
    if (bot.code === null) return { status: 'ignored', reason: 'The bot has no code deployed' }
    const integrations = await this.store.listIntegrations(bot.id)
    const integration = integrations.find((i) => i.name === 'chat' && i.enabled) ?? integrations[0]
    if (!integration) return { status: 'ignored', reason: 'The bot has no integration to run with' }
    const botKey: BotStateKey = { scope: 'bot', scopeId: '' }
    const [botState] = await this.store.getBotStates(bot.id, [botKey])
    const state = { user: {}, conversation: {}, bot: botState ?? {}, workflow: {} }
    const input: TurnInput = { event: botLevelTurnEvent(bot, integration, event, state), flow: null, conversationStarted: false, budgetMs: this.limitsOf(bot).budgetMs }
    const host = this.host(bot, integration, null, `event:${event.id}`)
    const startedAt = performance.now()
    try {
      const output = JSON.parse(await this.sandbox.run(
        { botId: bot.id, version: String(bot.deployedAt), code: bot.code, entry: 'turn', input: JSON.stringify(input), limits: this.limitsOf(bot) },
        host,
      )) as TurnOutput
      this.observeRun('bot_event', startedAt, BotRuntime.reasonOf(output.errors))
      await this.store.saveBotStates(bot.id, [{ ...botKey, patch: diffState(state.bot, (output.state?.bot ?? {}) as JsonObject) }], this.clock())
      return output.errors?.length ? { status: 'failed', reason: mapDeployedPositions(output.errors[0]!, this.sourceMapOf(bot)).slice(0, 1000) } : { status: 'processed' }
    } catch (err) {
      this.observeRun('bot_event', startedAt, BotRuntime.failureOf(err))
      await this.recordFailure(bot, null, `Turn for ${event.type} event ${event.id}`, err)
      return { status: 'failed', reason: (err as Error).message.slice(0, 1000) }
    } finally {
      await host.flush()
    }
  }

  /**
   * The bot's beforeIncoming hook for messages and events of this integration, or undefined when the
   * bot has none (no code, or code without the hook). The hook runs on a message or event before it
   * is stored: it may change the payload (what is stored and delivered is the changed payload) or stop it.
   */
  async incomingHook(integration: IntegrationRow): Promise<IncomingHook | undefined> {
    const bot = (await this.botOf(integration.id))?.bot
    const code = bot?.code
    // A remote bot's hooks run in its own program (the SDK's beforeIncomingMessage), not here.
    if (!bot || !code || bot.url !== null) return undefined
    const summary = await this.summary(bot)
    if (!summary?.hooks.includes('beforeIncoming')) return undefined
    return async (draft) => (await this.handoffs?.isHandedOff(integration.id, draft.conversationId))
      // Handed off: the bot's hooks do not see the user's messages (a person answers them).
      ? { payload: draft.payload, stop: false }
      : this.beforeIncoming(bot, code, integration, draft)
  }

  private async beforeIncoming(bot: BotRow, code: string, integration: IntegrationRow, draft: IncomingDraft): Promise<{ payload: JsonObject; stop: boolean }> {
    const unchanged = { payload: draft.payload, stop: false }
    const { state } = await this.loadState(bot, integration.id, draft.conversationId, draft.userId)
    const event = this.buildEvent(bot, integration, { kind: 'draft', ...draft, createdAt: this.clock() }, state)
    const host = this.host(bot, integration, draft.conversationId, `before:${draft.id}`)
    const startedAt = performance.now()
    try {
      const output = JSON.parse(await this.sandbox.run(
        { botId: bot.id, version: String(bot.deployedAt), code, entry: 'beforeIncoming', input: JSON.stringify({ event, budgetMs: this.limitsOf(bot).budgetMs }), limits: this.limitsOf(bot) },
        host,
      )) as BeforeIncomingOutput
      this.observeRun('before_incoming', startedAt, BotRuntime.reasonOf(output.errors))
      const payload = output.payload ?? draft.payload
      const problem = draft.custom ? undefined : this.options.validatePayload(payload)
      if (problem) {
        host.log('error', `beforeIncoming returned an invalid payload (${problem}); the original payload was kept`)
        return unchanged
      }
      return { payload: payload as JsonObject, stop: output.stop === true }
    } catch (err) {
      this.observeRun('before_incoming', startedAt, BotRuntime.failureOf(err))
      await this.recordFailure(bot, draft.conversationId, 'beforeIncoming hook', err)
      return unchanged
    } finally {
      await host.flush()
    }
  }
}
