import type { PubSub } from '../pubsub/pubsub.js'
import type { AppendNotification, BotRow, IntegrationRow, Store } from '../store/store.js'
import type { BotSummary } from './prelude-contract.js'
import type { BotSandbox } from './sandbox.js'

/** The channel on which new incoming messages and events announce "this conversation has work". */
export const TURNS_CHANNEL = 'bot-turns'
/** Bots that changed (code deployed, integrations toggled, deleted): instances drop their cached copy. */
export const BOTS_CHANNEL = 'bots-changed'
/** Safety net for a missed change notification. */
const BOT_CACHE_TTL_MS = 5_000

/** Whether a bot has turns to run: deployed code, or a url. */
export const hasTurns = (bot: BotRow) => bot.url !== null || bot.code !== null

/** An integration and the bot it belongs to. */
export interface BotOwner { bot: BotRow; integration: IntegrationRow }

export interface BotDirectoryOptions {
  /** A bot changed or was deleted (on every instance: told through pub/sub). */
  onBotsChanged?: ((botId: string) => void) | undefined
  clock?: (() => number) | undefined
}

/**
 * The bots behind integrations, as the runtime sees them: the bot of an integration (cached: every message
 * needs it, it changes only on deploys) and the export summary of its deployed code. A change of a bot on
 * any instance (botChanged, told through pub/sub on BOTS_CHANNEL) drops every instance's cached copies.
 */
export class BotDirectory {
  private readonly clock: () => number
  private readonly owners = new Map<string, { at: number; owner: Promise<BotOwner | undefined> }>()
  private readonly summaries = new Map<string, Promise<BotSummary | undefined>>()

  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly sandbox: Pick<BotSandbox, 'check'>,
    private readonly options: BotDirectoryOptions = {},
  ) {
    this.clock = options.clock ?? Date.now
  }

  /** Listens for bots changed on other instances; resolves with the function that stops listening. */
  start(): Promise<() => Promise<void>> {
    return this.pubsub.subscribe(BOTS_CHANNEL, (botId) => this.forget(botId))
  }

  /** The bot behind an integration, cached (every message needs it; it changes only on deploys). */
  ownerOf(integrationId: string): Promise<BotOwner | undefined> {
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

  /** The bot's export summary for its current code, loaded once per deployed version. */
  summary(bot: BotRow): Promise<BotSummary | undefined> {
    if (bot.code === null) return Promise.resolve(undefined)
    const key = `${bot.id}@${bot.deployedAt}`
    let summary = this.summaries.get(key)
    if (!summary) {
      summary = this.sandbox.check(bot.code).then((r) => (r.ok ? r.summary : undefined))
      this.summaries.set(key, summary)
    }
    return summary
  }

  /** The notification announcing new incoming work in a conversation, sent with the user's message or event (none if the bot has no code). */
  async turnNotification(integrationId: string, conversationId: string): Promise<AppendNotification | undefined> {
    // A bot without code or url has nothing to run (its first deploy fast-forwards the cursors).
    const owner = await this.ownerOf(integrationId)
    if (!owner || !hasTurns(owner.bot)) return undefined
    return { channel: TURNS_CHANNEL, message: JSON.stringify([integrationId, conversationId]) }
  }

  /** Called when a bot changes anywhere: every instance drops its cached copy. */
  async botChanged(botId: string): Promise<void> {
    this.forget(botId)
    await this.pubsub.publish(BOTS_CHANNEL, botId)
  }

  /** Bots change rarely: any change drops the whole cache (and, through onBotsChanged, the Chat API's integration cache). */
  private forget(botId: string): void {
    this.owners.clear()
    this.options.onBotsChanged?.(botId)
  }
}
