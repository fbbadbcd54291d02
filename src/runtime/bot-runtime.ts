import type { IncomingHook, IncomingInterceptor } from '../domain/chat-service.js'
import type { HandoffService } from '../domain/handoff-service.js'
import type { TablesService } from '../domain/tables-service.js'
import type { SemanticRanking } from '../domain/knowledge/embeddings/fusion.js'
import type { MetricsRegistry } from '../lib/metrics.js'
import type { PubSub } from '../pubsub/pubsub.js'
import type { AppendNotification, BotRow, IntegrationRow, JsonObject, Store } from '../store/store.js'
import { BeforeIncoming } from './before-incoming.js'
import { BotActions } from './bot-actions.js'
import type { BotDirectory } from './bot-directory.js'
import type { BotEventOutcome, BotLevelEvent } from './bot-events.js'
import type { KnowledgeAnswers } from '../domain/knowledge/knowledge-answer.js'
import type { AgentSteps } from '../domain/agent/agent-steps.js'
import type { BotSummary } from './prelude-contract.js'
import type { RemoteBots } from './remote-bots.js'
import type { LlmGateway } from '../domain/llm/llm-gateway.js'
import { BotClientHosts, type BotClientDomain, type PayloadValidator } from './sandbox-host.js'
import type { BotSandbox, SandboxLimits } from './sandbox.js'
import { SandboxTurns } from './sandbox-turns.js'
import { SandboxUnits } from './sandbox-units.js'
import { TurnScheduler } from './turn-scheduler.js'
import type { HostExtension, WebhookEventSource } from './webhook-events.js'

export { BOTS_CHANNEL, TURNS_CHANNEL, hasTurns } from './bot-directory.js'
export { TYPING_TTL_MS, type PayloadValidator } from './sandbox-host.js'
export type { TurnExecutor, TurnResult } from './turn-executor.js'
export type { Incoming } from './turn-event.js'

export interface BotRuntimeOptions<D extends BotClientDomain = BotClientDomain> {
  /**
   * Builds the domain behind the sandboxed bot's client (BotChatService on ChatService, and the installed
   * integrations' actions) around the runtime's `incoming` side: ChatService runs the bot's beforeIncoming hook
   * before it stores a message, and that hook's code has this client. The one cycle of the composition
   * (docs/architecture.md), tied here, inside one constructor: nothing is set after it returns.
   */
  domain: (incoming: IncomingInterceptor) => D
  limits: SandboxLimits
  /** The bots behind integrations (cached, dropped on every instance when one changes): built first in compose.ts. */
  directory: BotDirectory
  /** How often conversations left behind (a dead instance's expired lease, a missed notification) are picked up. */
  sweepMs?: number
  /** Validates payloads sent by bot code with the same rules as the Chat API. */
  validatePayload: PayloadValidator
  clock?: () => number
  /** Human handoff: a handed-off conversation's messages run no turns nor hooks; client.startHandoff / endHandoff. */
  handoffs?: HandoffService | undefined
  /** The Tables API service behind the sandboxed client's table operations. */
  tables?: TablesService | undefined
  /** Composes knowledge-card answers with the LLM gateway (docs/bot-code.md "knowledge"); the best passage is used when absent. */
  knowledgeAnswers?: KnowledgeAnswers | undefined
  /** The model's side of agent cards' steps (docs/bot-code.md "agent"); absent when no provider is configured. */
  agentSteps?: AgentSteps | undefined
  /** The vector ranking knowledge searches fuse with the lexical one (an embeddings service); lexical only when absent. */
  semanticRanking?: SemanticRanking | undefined
  /** Relevance threshold of bot knowledge searches (PARLEY_KB_MIN_SCORE; 0: off). */
  kbMinScore?: number | undefined
  /** The LLM gateway behind bot code's client.generateText and generateTextStream (docs/llm.md). */
  llm?: LlmGateway | undefined
  /** Delivers the turns of bots with a `url` (remote @botpress/sdk programs); without it such bots' turns are skipped. */
  remote?: RemoteBots | undefined
  /** The instance's registry: the runtime's series (turns, their duration, failures, conversations behind) go there. */
  metrics?: MetricsRegistry | undefined
}

/**
 * The bot runtime, composed of its parts (built in one direction, each depending only on those before it):
 * - BotDirectory (bot-directory.ts): the bot behind an integration and its code's summary, cached and dropped on change;
 * - SandboxUnits (sandbox-units.ts): the one way to run a unit of bot code (limits, series, failures);
 * - BotClientHosts (sandbox-host.ts): the sandboxed bot's client (what its code may call during a run);
 * - SandboxTurns (sandbox-turns.ts): conversation turns, webhook and bot-level turns in the sandbox;
 * - TurnScheduler (turn-scheduler.ts): which conversation runs its turns when, under which lease;
 * - BotActions (bot-actions.ts): callAction, wherever the action runs;
 * - BeforeIncoming (before-incoming.ts): the hook ChatService runs before it stores a user's message or event.
 * A bot with a url runs in its own program (RemoteBots), whatever code it has.
 */
export class BotRuntime<D extends BotClientDomain = BotClientDomain> {
  /** The domain the runtime's client calls, built by `options.domain` around the runtime's incoming side. */
  readonly domain: D
  private readonly directory: BotDirectory
  private readonly hosts: BotClientHosts
  private readonly sandboxTurns: SandboxTurns
  private readonly scheduler: TurnScheduler
  private readonly actions: BotActions
  private readonly beforeIncoming: BeforeIncoming

  constructor(private readonly store: Store, pubsub: PubSub, sandbox: BotSandbox, private readonly options: BotRuntimeOptions<D>) {
    const { clock, metrics, remote, handoffs } = options
    const directory = options.directory
    this.directory = directory
    const units = new SandboxUnits(store, sandbox, { limits: options.limits, clock, metrics })
    // The cycle, tied once: the domain is built around the hook below, which runs with a client on that domain.
    // ChatService calls the hook only once a message comes, after this constructor (BeforeIncoming is set by then).
    const incoming: IncomingInterceptor = {
      incomingHook: (integration) => beforeIncoming.incomingHook(integration),
      turnNotification: (integrationId, conversationId) => directory.turnNotification(integrationId, conversationId),
    }
    this.domain = options.domain(incoming)
    this.hosts = new BotClientHosts(store, pubsub, units, this.domain, options)
    this.sandboxTurns = new SandboxTurns(store, units, this.hosts, { clock })
    this.scheduler = new TurnScheduler(store, pubsub, this.directory, this.sandboxTurns, units, { remote, handoffs, sweepMs: options.sweepMs, clock, metrics })
    this.actions = new BotActions(store, units, this.hosts, { remote, clock })
    const beforeIncoming = new BeforeIncoming(store, directory, units, this.hosts, { validatePayload: options.validatePayload, handoffs, clock })
    this.beforeIncoming = beforeIncoming
  }

  start(): Promise<void> {
    return this.scheduler.start()
  }

  stop(): Promise<void> {
    return this.scheduler.stop()
  }

  /** Resolves when the conversation has no turn running or pending (tests, shutdown). */
  idle(integrationId: string, conversationId: string): Promise<void> {
    return this.scheduler.idle(integrationId, conversationId)
  }

  /** The notification announcing new incoming work in a conversation, sent with the user's message or event (none if the bot has no code). */
  turnNotification(integrationId: string, conversationId: string): Promise<AppendNotification | undefined> {
    return this.directory.turnNotification(integrationId, conversationId)
  }

  /** Called when a bot changes anywhere: every instance drops its cached copy. */
  botChanged(botId: string): Promise<void> {
    return this.directory.botChanged(botId)
  }

  /** The bot's export summary for its current code, loaded once per deployed version. */
  summary(bot: BotRow): Promise<BotSummary | undefined> {
    return this.directory.summary(bot)
  }

  /** The bot's beforeIncoming hook for messages and events of this integration, or undefined when the bot has none. */
  incomingHook(integration: IntegrationRow): Promise<IncomingHook | undefined> {
    return this.beforeIncoming.incomingHook(integration)
  }

  /** callAction (BotActions): an installed integration's, the bot's url's or the sandboxed code's action. */
  callAction(bot: BotRow, type: string, input: JsonObject): Promise<JsonObject> {
    return this.actions.callAction(bot, type, input)
  }

  /**
   * A webhook delivery for the bot of `integration`: a bot-level `webhook:event` POSTed to a remote bot,
   * else a turn of its sandboxed code (SandboxTurns.webhookTurn); nothing for a bot without either.
   */
  async webhookTurn(integration: IntegrationRow, source: WebhookEventSource, extension?: HostExtension): Promise<void> {
    const bot = (await this.directory.ownerOf(integration.id))?.bot
    if (bot?.url != null) {
      // A remote bot gets it as a bot-level `webhook:event` (payload as the sandbox sees it; no client.readWebhookBody).
      await this.options.remote?.deliverBotEvent(bot, {
        id: source.id, type: `${integration.name}:event`, payload: source.payload, createdAt: new Date(source.createdAt).toISOString(), status: 'pending', failureReason: null,
      })
      return
    }
    if (!bot?.code) return
    await this.sandboxTurns.webhookTurn(bot, integration, source, extension)
  }

  /**
   * Delivers a bot-level event (no conversation: src/runtime/bot-events.ts) to its bot; the seam
   * RuntimeEventService calls for every such event it claims: POSTed to a remote bot, else a bot-level
   * turn of its sandboxed code (SandboxTurns.botEvent). Resolves with the outcome (a bot without code
   * ignores it); rejects only when the outcome is unknown (the event is then delivered again once its lease expires).
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
    return this.sandboxTurns.botEvent(bot, event)
  }
}
