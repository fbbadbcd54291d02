import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import type { BotLogRow, BotRow, JsonObject, Store } from '../store/store.js'
import { integrationScope } from './bot-chat-service.js'

/** What a log line quotes of an observation's data. */
const LOG_DATA_CHARS = 2_000

export interface ObservationInput {
  id?: string | undefined
  name: string
  data: JsonObject
  messageId?: string | undefined
  eventId?: string | undefined
  conversationId?: string | undefined
  userId?: string | undefined
  errorId?: string | undefined
  traceId?: string | undefined
}

export interface IntegrationConfiguration {
  identifier?: string | null | undefined
  scheduleRegisterCall?: string | undefined
  sandboxIdentifiers?: JsonObject | null | undefined
}

/**
 * trackAnalytics, captureObservation and configureIntegration: what a bot (or an integration acting
 * for it) reports about itself. Botpress feeds these to its cloud dashboards; Parley stores them
 * (analytics as per-day counters, observations bounded to the newest `keep` per bot, registrations
 * per integration) and writes a line to the bot's logs for each, so that they are readable where the
 * bot's other diagnostics are (getBotLogs, the dashboard's log view).
 */
export class RuntimeTelemetryService {
  private readonly clock: () => number

  constructor(private readonly store: Store, private readonly options: { observationsKept: number; clock?: () => number }) {
    this.clock = options.clock ?? Date.now
  }

  private async log(bot: BotRow, message: string, conversationId: string | null = null): Promise<void> {
    const row: BotLogRow = { id: uuidv7(), botId: bot.id, at: this.clock(), level: 'info', message, conversationId }
    await this.store.appendBotLogs([row])
  }

  async trackAnalytics(bot: BotRow, name: string, count: number): Promise<void> {
    const now = this.clock()
    await this.store.telemetry.addAnalytics(bot.id, name, new Date(now).toISOString().slice(0, 10), count, now)
    await this.log(bot, `analytics ${name} ${count >= 0 ? '+' : ''}${count}`)
  }

  async captureObservation(bot: BotRow, input: ObservationInput): Promise<void> {
    const { id, name, data, ...rest } = input
    const refs = Object.fromEntries(Object.entries(rest).filter((e): e is [string, string] => typeof e[1] === 'string'))
    await this.store.telemetry.addObservation({ id: id ?? uuidv7(), botId: bot.id, name, data, refs, createdAt: this.clock() }, this.options.observationsKept)
    const text = JSON.stringify(data)
    await this.log(bot, `observation ${name} ${text.length > LOG_DATA_CHARS ? `${text.slice(0, LOG_DATA_CHARS)}…` : text}`, refs.conversationId ?? null)
  }

  /**
   * Stores what an integration says about itself (its identifier, when register() should be called
   * again, sandbox identifiers) on the integration named by x-integration-id (id or name) or
   * x-integration-alias; Parley's built-in integrations are registered already, so nothing is
   * scheduled.
   */
  async configureIntegration(bot: BotRow, integrationRef: string | undefined, input: IntegrationConfiguration): Promise<void> {
    // An integration key configures its own installation (whatever the headers name: they were checked against the key).
    const integrations = await this.store.listIntegrations(bot.id)
    const integration = integrationScope(bot) ?? (integrationRef === undefined
      ? (integrations.length === 1 ? integrations[0] : undefined)
      : integrations.find((i) => i.id === integrationRef || i.name === integrationRef))
    if (!integration) {
      if (integrationRef === undefined) throw errors.invalidPayload('Name the integration to configure with the x-integration-id (or x-integration-alias) header')
      throw errors.notFound('Integration', integrationRef)
    }
    await this.store.telemetry.setRegistration(integration.id, input, this.clock())
    await this.log(bot, `integration ${integration.name} configured: ${JSON.stringify(input).slice(0, LOG_DATA_CHARS)}`)
  }
}
