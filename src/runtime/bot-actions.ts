import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { answeredStatus, unansweredError } from '../lib/outbound-policy.js'
import { checkDeclaredAction } from '../domain/builtin-actions.js'
import type { BotRow, IntegrationRow, JsonObject, Store } from '../store/store.js'
import { refusedError } from './endpoint-slots.js'
import type { RemoteBots } from './remote-bots.js'
import type { BotClientHosts } from './sandbox-host.js'
import { UnitOutputTooLarge, type SandboxUnits } from './sandbox-units.js'

/** Largest output of an action (callAction): the Runtime API's 1 MB. */
const MAX_ACTION_OUTPUT = 1024 * 1024

/** The bot's actions (the Runtime API's callAction), wherever they run: an installed integration, the bot's url, the sandbox. */
export class BotActions {
  private readonly clock: () => number

  constructor(
    private readonly store: Store,
    private readonly units: SandboxUnits,
    private readonly hosts: BotClientHosts,
    private readonly options: { remote?: RemoteBots | undefined; clock?: (() => number) | undefined },
  ) {
    this.clock = options.clock ?? Date.now
  }

  /**
   * callAction: `alias:action` to the bot's integration of that alias (IntegrationOperations, never the bot's url);
   * else the bot's action `type` (one its definition declares: checkDeclaredAction) with `input`, run where its turns run: POSTed to its url
   * (`action_triggered`, the SDK answers `{ output }`), or in the sandbox (the deployed module's
   * `actions`, under the bot's per-run budget). Unknown action → 404; a failing action → 400 Runtime;
   * a remote bot that does not answer in time → 504. The output is a JSON object of at most 1 MB.
   */
  async callAction(bot: BotRow, type: string, input: JsonObject): Promise<JsonObject> {
    const fromIntegration = await this.hosts.integrationAction(bot, type, input)
    if (fromIntegration !== undefined) return fromIntegration as JsonObject
    checkDeclaredAction(bot, type)
    if (bot.url !== null) return this.remoteAction(bot, type, input)
    if (bot.code === null) throw errors.notFound('Action', type)
    const [botState] = await this.store.getBotStates(bot.id, [{ scope: 'bot', scopeId: '' }])
    const chat = (await this.store.listIntegrations(bot.id)).find((i) => i.name === 'chat' && i.enabled)
    const id = uuidv7()
    const event = {
      botId: bot.id, createdOn: new Date(this.clock()).toISOString(), direction: 'incoming', id, integration: chat?.name ?? 'chat', payload: { type, input },
      preview: `action ${type}`, state: { user: {}, conversation: {}, bot: botState ?? {}, workflow: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'action',
    }
    const host = this.hosts.create(bot, chat ?? ({ id: '', botId: bot.id, name: 'chat' } as IntegrationRow), null, `action:${id}`)
    let result: { output?: JsonObject; error?: string; unknown?: boolean }
    try {
      result = await this.units.run(bot, { kind: 'action', entry: 'action', input: { event, type, input }, maxOutputBytes: MAX_ACTION_OUTPUT }, host)
    } catch (err) {
      if (err instanceof UnitOutputTooLarge) throw errors.runtime(`Action "${type}": its output is larger than ${MAX_ACTION_OUTPUT} bytes`)
      await this.units.recordFailure(bot, null, `Action ${type}`, err)
      throw errors.runtime(this.units.failureLog(bot, null, `Action "${type}"`, err).message)
    } finally {
      await host.flush()
    }
    if (result.unknown) throw errors.notFound('Action', type)
    if (result.error !== undefined || !result.output) throw errors.runtime(`Action "${type}" failed: ${result.error ?? 'no output'}`)
    return result.output
  }

  /** The action POSTed to the bot's url (`action_triggered`); its answer's `output`. */
  private async remoteAction(bot: BotRow, type: string, input: JsonObject): Promise<JsonObject> {
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
}
