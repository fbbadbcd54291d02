import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import type { BotRow, IntegrationRow, JsonObject, Store } from '../store/store.js'
import type { ConversationLog } from './conversation-log.js'

/**
 * The actions of the built-in integrations, for `callAction({ type: '<alias>:<action>' })` with the alias of a
 * built-in one, as Botpress's own integrations of the same name declare them (botpress/botpress
 * integrations/chat/integration.definition.ts, integrations/webhook/integration.definition.ts):
 * - `chat:sendEvent` { conversationId, payload } → {}: a custom event from the bot to the chat client, which its
 *   listener receives as `event_created` (isBot true, `payload` as given); no turn.
 * - the webhook integration declares no action.
 * Any other action of a built-in integration: 404 naming the ones it has.
 */
export const BUILT_IN_ACTIONS: Readonly<Record<string, readonly string[]>> = { chat: ['sendEvent'], webhook: [] }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export class BuiltInActions {
  constructor(
    private readonly store: Store,
    private readonly log: ConversationLog,
    private readonly clock: () => number = Date.now,
  ) {}

  async call(integration: IntegrationRow, action: string, input: JsonObject): Promise<JsonObject> {
    const type = `${integration.name}:${action}`.slice(0, 300)
    const actions = BUILT_IN_ACTIONS[integration.name] ?? []
    if (!actions.includes(action)) {
      throw errors.notFoundBecause(`Action "${type}" not found: the built-in ${integration.name} integration has ${actions.length > 0 ? `the actions ${actions.join(', ')}` : 'no actions'}`)
    }
    if (!integration.enabled) throw errors.invalidPayload(`Integration "${integration.name}" is disabled in this bot`)
    // sendEvent, the one action so far.
    const { conversationId, payload } = input
    if (typeof conversationId !== 'string' || conversationId === '') throw errors.invalidPayload(`input of action "${type}": conversationId must be a non-empty string`)
    if (!isObject(payload)) throw errors.invalidPayload(`input of action "${type}": payload must be an object`)
    const conversation = conversationId.length <= 200 ? await this.store.getConversation(integration.id, conversationId) : undefined
    if (!conversation) throw errors.notFound('Conversation', conversationId)
    await this.log.appendBotEvent(integration, conversation.id, uuidv7(), payload as JsonObject, this.clock())
    return {}
  }
}

/**
 * An action without `alias:` is the bot's own: refused before delivery (404 ResourceNotFound, what Botpress answers
 * for an action that does not exist) when the bot's definition declares actions (createBot/updateBot `actions`, what
 * `bp deploy` sends) and not this one. A bot that never declared any (registered by hand) is not checked.
 */
export function checkDeclaredAction(bot: BotRow, type: string): void {
  const declared = bot.actions
  if (declared === null || declared === undefined || Object.hasOwn(declared, type)) return
  const names = Object.keys(declared)
  throw errors.notFoundBecause(`Action "${type.slice(0, 200)}" not found: the bot's definition does not declare it (its actions: ${names.length > 0 ? names.slice(0, 50).join(', ') : 'none'}); an integration's action is "<alias>:<action>"`)
}
