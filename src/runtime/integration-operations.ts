import { urlName } from '../domain/hosted-code.js'
import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { answeredStatus, outboundFailure, unansweredError } from '../lib/outbound-policy.js'
import type { Installation, IntegrationService } from '../domain/integration-service.js'
import { definitionOf, type IntegrationDeclarations } from '../domain/integration-declarations.js'
import type { StateDefinition } from '../domain/runtime-state-service.js'
import type { CreateEventInput } from '../domain/runtime-event-service.js'
import { integrationScope } from '../domain/bot-chat-service.js'
import { checkDeclaredType } from '../domain/message-shapes.js'
import type { LlmInterface } from '../domain/llm/llm-interface.js'
import type { BuiltInActions } from '../domain/builtin-actions.js'
import type { Tags } from '../store/bot-chat-store.js'
import type { BotRow, IntegrationRow, JsonObject, Store } from '../store/store.js'
import { DeliveryStopped, type RemoteAnswer } from './outbound-http.js'
import { refusedError } from './endpoint-slots.js'
import type { IntegrationDelivery } from './integrations.js'

/**
 * The operations of an installed @botpress/sdk integration beyond webhooks, outgoing messages and
 * register (src/runtime/integrations.ts has those), as the SDK's integration server reads them:
 * - `ping` (no body; the SDK answers 200 without running integration code): PingInstallation, the
 *   admin's health check of one installation (pingBotIntegration).
 * - `create_user` { tags } / `create_conversation` { channel, tags }: when the bot (not the integration)
 *   creates a user or conversation of the installation whose definition enables it
 *   (`user.creation.enabled`, `channels.<c>.conversation.creation.enabled`): the integration creates
 *   it through the Runtime API and answers { user: { id } } / { conversation: { id } }.
 * - `action_triggered` checks around IntegrationDelivery.callAction: the input and the output against
 *   the action's schemas, an unknown alias as a clear 404 (never the bot's own url); built-in aliases' actions.
 * And what the integration does through the Runtime API with its key: createEvent with a declared event
 * type (the bot sees `alias:event`), states of its own definition (`states`), stored per installation;
 * channels the bot disabled (`disabledChannels`) refused visibly; its secret values for it alone.
 */


export interface PingResult {
  ok: boolean
  /** The integration's HTTP status (absent when it could not be reached). */
  status?: number
  latencyMs: number
  message: string
}

/** The built-in chat and webhook integrations are never installations (no query for them on the hot paths). */
const isBuiltIn = (integration: IntegrationRow) => integration.name === 'chat' || integration.name === 'webhook'

const defOf = definitionOf
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export class IntegrationOperations {
  constructor(
    private readonly store: Store,
    private readonly service: IntegrationService,
    private readonly delivery: IntegrationDelivery,
    private readonly builtIn: BuiltInActions,
    private readonly declarations: IntegrationDeclarations,
    /** The configured LLM providers as integrations implementing the `llm` interface (docs/llm.md "The llm interface"). */
    private readonly llm?: LlmInterface | undefined,
  ) {}

  /** One request to the integration (the same headers and signature as every other operation). */
  private async send(bot: BotRow, install: Installation, operation: string, body: unknown): Promise<RemoteAnswer> {
    return this.delivery.once(bot, install, operation, operation, body)
  }

  private async installationOf(bot: BotRow, alias: string): Promise<Installation> {
    const install = alias.length <= 100 ? await this.service.installationByAlias(bot, alias) : undefined
    if (!install) throw errors.notFound('Integration', alias)
    return install
  }

  // ---- ping ----

  /** `ping` to one installation: reachable and answering 2xx, in the integration's logs either way. */
  async ping(bot: BotRow, alias: string): Promise<PingResult> {
    const install = await this.installationOf(bot, alias)
    if (install.definition.url === null) throw errors.invalidPayload(`Integration "${install.definition.name}" has no url: set it with updateIntegration({ url })`)
    const started = performance.now()
    let result: PingResult
    try {
      const answer = await this.send(bot, install, 'ping', {})
      const ok = answer.status >= 200 && answer.status < 300
      result = {
        ok, status: answer.status, latencyMs: Math.round(performance.now() - started),
        message: ok ? 'The integration answered ping' : `The integration ${answeredStatus(answer.status)}`,
      }
    } catch (err) {
      if (err instanceof DeliveryStopped) throw errors.unavailable()
      result = { ok: false, latencyMs: Math.round(performance.now() - started), message: `${urlName(install.definition.url)} could not be reached: ${outboundFailure(err)}` }
    }
    await this.service.log(install.definition.id, bot.id, result.ok ? 'info' : 'warn', `ping (bot ${bot.id}, alias ${alias}): ${result.message}`)
    return result
  }

  // ---- create_user / create_conversation ----

  /**
   * The bot creates a user of an installation whose definition has `user.creation.enabled`: the
   * integration does (create_user { tags }) and answers its id. undefined: not an installation that
   * creates users (Parley creates the row itself, as for the chat integration).
   */
  async createUser(bot: BotRow, integration: IntegrationRow, tags: Tags): Promise<string | undefined> {
    if (integrationScope(bot) || isBuiltIn(integration)) return undefined
    const install = await this.service.installation(integration)
    const creation = install && (defOf(install).user as { creation?: { enabled?: unknown; requiredTags?: unknown } } | undefined)?.creation
    if (!install || creation?.enabled !== true) return undefined
    this.requireTags(creation.requiredTags, tags, `integration "${integration.name}" (user.creation.requiredTags)`)
    return this.created(bot, install, 'create_user', { tags }, 'user')
  }

  /** The same for a conversation of a channel with `conversation.creation.enabled` (create_conversation { channel, tags }). */
  async createConversation(bot: BotRow, integration: IntegrationRow, channel: string, tags: Tags): Promise<string | undefined> {
    if (integrationScope(bot) || isBuiltIn(integration)) return undefined
    const install = await this.service.installation(integration)
    if (!install) return undefined
    const channels = (defOf(install).channels ?? {}) as Record<string, { conversation?: { creation?: { enabled?: unknown; requiredTags?: unknown } } }>
    if (!Object.hasOwn(channels, channel)) throw errors.invalidPayload(`Integration "${integration.name}" has no channel "${channel.slice(0, 100)}" (it has: ${Object.keys(channels).join(', ') || 'none'})`)
    await this.checkChannel(bot, install, channel)
    const creation = channels[channel]?.conversation?.creation
    if (creation?.enabled !== true) return undefined
    this.requireTags(creation.requiredTags, tags, `channel "${channel}" of integration "${integration.name}" (conversation.creation.requiredTags)`)
    return this.created(bot, install, 'create_conversation', { channel, tags }, 'conversation')
  }

  private requireTags(required: unknown, tags: Tags, what: string): void {
    if (!Array.isArray(required)) return
    const missing = required.filter((t): t is string => typeof t === 'string' && !tags[t])
    if (missing.length > 0) throw errors.invalidPayload(`tags: ${missing.join(', ')} required to create it through ${what}`)
  }

  private async created(bot: BotRow, install: Installation, operation: 'create_user' | 'create_conversation', body: JsonObject, kind: 'user' | 'conversation'): Promise<string> {
    const alias = install.integration.name
    let answer: RemoteAnswer
    try {
      answer = await this.send(bot, install, operation, body)
    } catch (err) {
      await this.service.log(install.definition.id, bot.id, 'error', `${operation}: ${outboundFailure(err)}`)
      throw refusedError(err, `Integration "${alias}" was not asked to ${operation}`) ?? unansweredError(`Integration "${alias}" did not answer ${operation}`, err)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(answer.body)
    } catch {
      parsed = undefined
    }
    if (answer.status < 200 || answer.status >= 300) {
      // Its status only: the answer's body is the target's (README "Outbound requests").
      await this.service.log(install.definition.id, bot.id, 'error', `${operation}: ${answeredStatus(answer.status)}`)
      throw errors.runtime(`Integration "${alias}" could not create the ${kind} (${operation} ${answeredStatus(answer.status)})`)
    }
    const id = isObject(parsed) && isObject(parsed[kind]) ? parsed[kind].id : undefined
    if (typeof id !== 'string' || id === '') {
      await this.service.log(install.definition.id, bot.id, 'error', `${operation}: the answer has no ${kind}.id`)
      throw errors.runtime(`Integration "${alias}" did not create the ${kind}: its ${operation} handler answered no { ${kind}: { id } }`)
    }
    return id
  }

  // ---- actions ----

  /**
   * callAction for the bot (the Runtime API's route and the sandboxed client): `alias:action` goes to the bot's
   * integration of that alias, never to the bot: an installation (its input and output checked against the action's
   * schemas), or a built-in integration (BuiltInActions: `chat:sendEvent`; a configured LLM provider's
   * `generateContent` and `listLanguageModels`, LlmInterface). An alias the bot has no integration of: 404. undefined when `type` has no `alias:` (the bot's own action).
   */
  async callAction(bot: BotRow, type: string, input: JsonObject): Promise<Record<string, unknown> | undefined> {
    const colon = type.indexOf(':')
    if (colon <= 0) return undefined
    const alias = type.slice(0, colon)
    const name = type.slice(colon + 1)
    const integration = alias.length <= 100 ? (await this.store.listIntegrations(bot.id)).find((i) => i.name === alias) : undefined
    if (!integration && this.llm?.handles(alias)) return this.llm.call(bot, alias, name, input)
    if (!integration) throw errors.notFoundBecause(`Action "${type.slice(0, 200)}" not found: the bot has no integration installed as "${alias.slice(0, 100)}"`)
    const install = await this.service.installation(integration)
    if (!install) return this.builtIn.call(integration, name, input)
    const action = (defOf(install).actions as Record<string, { input?: { schema?: unknown }; output?: { schema?: unknown } }> | undefined)?.[name]
    if (!install.integration.enabled) throw errors.invalidPayload(`Integration "${install.integration.name}" is disabled in this bot`)
    if (!action) throw errors.notFound('Action', type)
    const problem = this.declarations.validator(install, `action:${type}:input`, action.input?.schema)?.(input)
    if (problem) throw errors.invalidPayload(`input of action "${type}" does not match its schema: input${problem.startsWith('.') ? '' : ' '}${problem}`)
    const output = await this.delivery.callAction(bot, install, name, input)
    const wrong = this.declarations.validator(install, `action:${type}:output`, action.output?.schema)?.(output)
    if (wrong) {
      await this.service.log(install.definition.id, bot.id, 'error', `action_triggered ${type}: the output does not match the action's schema: output ${wrong}`)
      throw errors.runtime(`Action "${type}": the integration's output does not match the action's output schema: output${wrong.startsWith('.') ? '' : ' '}${wrong}`)
    }
    return output
  }

  // ---- disabled channels ----

  /** 400 (and a line in the integration's and the bot's logs) when `channel` is disabled in this installation. */
  private async checkChannel(bot: BotRow, install: Installation, channel: string, conversationId: string | null = null): Promise<void> {
    if (!(install.link.disabledChannels ?? []).includes(channel)) return
    const line = `A message in conversation ${conversationId ?? '(new)'} on channel "${channel}" of integration ${install.integration.name} was refused: the channel is disabled in this bot (updateBot integrations.${install.integration.name}.disabledChannels)`
    await this.service.log(install.definition.id, bot.id, 'warn', line, conversationId)
    await this.store.appendBotLogs([{ id: uuidv7(), botId: bot.id, at: Date.now(), level: 'warn', message: line, conversationId }]).catch(() => {})
    throw errors.invalidPayload(`Channel "${channel}" of integration "${install.integration.name}" is disabled in this bot (disabledChannels): the message was not created`)
  }

  /**
   * Before a message is appended to a conversation of an installation (the bot's or the integration's):
   * refused when its type is not one the channel's definition declares (`channels.<c>.messages`), or when
   * its channel is disabled. Built-in integrations have neither (the chat's types are its payload rules').
   */
  async beforeMessage(integration: IntegrationRow, conversationId: string, channel: string | undefined, type: string): Promise<void> {
    if (isBuiltIn(integration)) return
    const install = await this.service.installation(integration)
    if (!install) return
    const conversationChannel = channel ?? (await this.store.botChat.getConversation([integration.id], conversationId))?.channel
    if (conversationChannel === undefined) return
    const channels = (defOf(install).channels ?? {}) as Record<string, { messages?: Record<string, unknown> }>
    // A channel the definition does not have (an older definition's) has no declared types to hold it to.
    const declared = Object.hasOwn(channels, conversationChannel) ? channels[conversationChannel]?.messages : undefined
    if (isObject(declared)) checkDeclaredType(type, Object.keys(declared), conversationChannel, integration.name)
    if ((install.link.disabledChannels ?? []).length === 0) return
    const bot = await this.store.getBot(integration.botId)
    if (bot) await this.checkChannel(bot, install, conversationChannel, conversationId)
  }

  // ---- secrets ----

  /** The secret values of a definition: for the integration's own key only (getIntegrationSecrets), never in another answer. */
  secrets(definitionId: string): Promise<Record<string, string>> {
    return this.store.integrations.getSecrets(definitionId)
  }
}
