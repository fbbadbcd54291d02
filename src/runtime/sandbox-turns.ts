import { diffState } from '../lib/state-patch.js'
import type { BotRow, BotStateKey, BotStateWrite, IntegrationRow, JsonObject, Store } from '../store/store.js'
import type { TurnInput, TurnOutput } from './prelude-contract.js'
import { botLevelTurnEvent, type BotEventOutcome, type BotLevelEvent } from './bot-events.js'
import type { BotClientHosts, RunHost } from './sandbox-host.js'
import { SandboxUnits, type RunKind } from './sandbox-units.js'
import type { TurnExecutor, TurnResult } from './turn-executor.js'
import { buildEvent, loadState, startedId, type Incoming, type LoadedState } from './turn-event.js'
import { webhookEvent, withExtension, type HostExtension, type WebhookEventSource } from './webhook-events.js'

const BOT_KEY: BotStateKey = { scope: 'bot', scopeId: '' }
/** The state a turn without a conversation sees: only the bot's. */
type BotLevelState = { user: JsonObject; conversation: JsonObject; bot: JsonObject; workflow: JsonObject }

/**
 * Turns of bots whose deployed code runs in the sandbox: a conversation's turn (an incoming message or
 * event, or the conversation's start), and the bot-level turns with no conversation (a webhook delivery,
 * a bot-level event), of which only the bot-wide state persists.
 */
export class SandboxTurns {
  private readonly clock: () => number

  constructor(
    private readonly store: Store,
    private readonly units: SandboxUnits,
    private readonly hosts: BotClientHosts,
    options: { clock?: (() => number) | undefined } = {},
  ) {
    this.clock = options.clock ?? Date.now
  }

  /** The sandbox as the executor of conversation turns (TurnScheduler). */
  readonly executor: TurnExecutor = {
    leaseMs: (bot) => this.units.limitsOf(bot).timeoutMs + 10_000,
    admit: async () => () => {},
    turn: (bot, integration, incoming, loaded) => this.turn(bot, integration, incoming, loaded),
  }

  /** Runs one turn; what it leaves to save (states, logs) is saved by the caller with the cursor, in one transaction. */
  async turn(bot: BotRow, integration: IntegrationRow, incoming: Incoming, loaded?: LoadedState): Promise<TurnResult> {
    const { conversationId, userId, sourceId } =
      incoming.kind === 'message' ? { conversationId: incoming.message.conversationId, userId: incoming.message.userId, sourceId: incoming.message.id }
      : incoming.kind === 'event' ? { conversationId: incoming.event.conversationId, userId: incoming.event.userId, sourceId: incoming.event.id }
      : { conversationId: incoming.conversation.id, userId: incoming.conversation.ownerId, sourceId: startedId(incoming.conversation) }
    const { keys, state, flow } = loaded ?? (await loadState(this.store, bot, integration.id, conversationId, userId))
    const flowRecord = (flow ?? {}) as { started?: boolean; flow?: TurnInput['flow'] }
    const event = buildEvent(bot, integration, incoming, state)
    // An installed integration's event in a conversation (createEvent with its key): the bot sees its type, `alias:event`.
    if (incoming.kind === 'event' && event.type === 'custom') {
      const created = await this.store.runtimeEvents.get(bot.id, incoming.event.id)
      if (created?.type.includes(':')) event.type = created.type
    }
    const input: Omit<TurnInput, 'budgetMs'> = { event, flow: flowRecord.flow ?? null, conversationStarted: incoming.kind === 'started' }
    const host = this.hosts.create(bot, integration, conversationId, sourceId)
    const kind: RunKind = incoming.kind === 'started' ? 'start' : incoming.kind
    try {
      const output = await this.units.run<TurnOutput>(bot, { kind, entry: 'turn', input }, host)
      // output.errors were already written to the log by the in-sandbox runtime (host.log).
      const [userKey, conversationKey, botKey, flowKey] = keys as [BotStateKey, BotStateKey, BotStateKey, BotStateKey]
      const states: BotStateWrite[] = [
        { ...userKey, patch: diffState(state.user, (output.state?.user ?? {}) as JsonObject) },
        { ...conversationKey, patch: diffState(state.conversation, (output.state?.conversation ?? {}) as JsonObject) },
        { ...botKey, patch: diffState(state.bot, (output.state?.bot ?? {}) as JsonObject) },
      ]
      // The flow record as the turn leaves it, written only when it changed (most turns of a started conversation
      // outside a workflow leave it as it was: no state row to write then).
      const flowAfter = { started: true, flow: (output.flow ?? null) as JsonObject | null, workflow: (output.state?.workflow ?? {}) as JsonObject }
      if (flow === undefined || JSON.stringify(flow) !== JSON.stringify(flowAfter)) states.push({ ...flowKey, data: flowAfter })
      return { states, logs: host.takeLogs(), ownSeqs: host.ownSeqs, failure: SandboxUnits.reasonOf(output.errors) }
    } catch (err) {
      const what = incoming.kind === 'started' ? 'Turn for the conversation start' : `Turn for ${incoming.kind} ${sourceId}`
      return { states: [], logs: [...host.takeLogs(), this.units.failureLog(bot, conversationId, what, err)], ownSeqs: host.ownSeqs, failure: SandboxUnits.failureOf(err) }
    }
  }

  /**
   * A turn for a webhook delivery (the event: src/runtime/webhook-events.ts). It has no conversation,
   * so only the bot-wide state persists; `extension` adds host calls (client.readWebhookBody). The
   * client acts on the bot's chat integration when it has one, so a webhook can message a conversation.
   */
  async webhookTurn(bot: BotRow, integration: IntegrationRow, source: WebhookEventSource, extension?: HostExtension): Promise<void> {
    const state = await this.botState(bot)
    const chat = (await this.store.listIntegrations(bot.id)).find((i) => i.name === 'chat' && i.enabled)
    const host = withExtension(this.hosts.create(bot, chat ?? integration, null, source.id), extension)
    await this.botLevelTurn(bot, 'webhook', webhookEvent(bot, integration, source, state), state, host, `Turn for webhook ${source.id}`)
  }

  /**
   * A bot-level event (no conversation: src/runtime/bot-events.ts) run as for a webhook: its hooks see the
   * event (`type` as created), only state.bot persists, and its client acts on the bot's chat integration.
   * A failing turn is `failed`, its error in the bot's logs.
   */
  async botEvent(bot: BotRow, event: BotLevelEvent): Promise<BotEventOutcome> {
    const integrations = await this.store.listIntegrations(bot.id)
    const integration = integrations.find((i) => i.name === 'chat' && i.enabled) ?? integrations[0]
    if (!integration) return { status: 'ignored', reason: 'The bot has no integration to run with' }
    const state = await this.botState(bot)
    const host = this.hosts.create(bot, integration, null, `event:${event.id}`)
    const ran = await this.botLevelTurn(bot, 'bot_event', botLevelTurnEvent(bot, integration, event, state), state, host, `Turn for ${event.type} event ${event.id}`)
    if ('err' in ran) return { status: 'failed', reason: (ran.err as Error).message.slice(0, 1000) }
    return ran.errors?.length ? { status: 'failed', reason: this.units.mapPositions(bot, ran.errors[0]!).slice(0, 1000) } : { status: 'processed' }
  }

  private async botState(bot: BotRow): Promise<BotLevelState> {
    const [botState] = await this.store.getBotStates(bot.id, [BOT_KEY])
    return { user: {}, conversation: {}, bot: botState ?? {}, workflow: {} }
  }

  /** A turn with no conversation: only state.bot is saved; a failure of the run is written to the bot's logs. */
  private async botLevelTurn(
    bot: BotRow, kind: RunKind, event: TurnInput['event'], state: BotLevelState, host: RunHost, what: string,
  ): Promise<{ errors: string[] | undefined } | { err: unknown }> {
    const input: Omit<TurnInput, 'budgetMs'> = { event, flow: null, conversationStarted: false }
    try {
      const output = await this.units.run<TurnOutput>(bot, { kind, entry: 'turn', input }, host)
      await this.store.saveBotStates(bot.id, [{ ...BOT_KEY, patch: diffState(state.bot, (output.state?.bot ?? {}) as JsonObject) }], this.clock())
      return { errors: output.errors }
    } catch (err) {
      await this.units.recordFailure(bot, null, what, err)
      return { err }
    } finally {
      await host.flush()
    }
  }
}
