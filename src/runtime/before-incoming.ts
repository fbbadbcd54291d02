import type { IncomingDraft, IncomingHook } from '../domain/chat-service.js'
import type { HandoffService } from '../domain/handoff-service.js'
import type { BotRow, IntegrationRow, JsonObject, Store } from '../store/store.js'
import type { BotDirectory } from './bot-directory.js'
import type { BeforeIncomingOutput } from './prelude-contract.js'
import type { BotClientHosts, PayloadValidator } from './sandbox-host.js'
import type { SandboxUnits } from './sandbox-units.js'
import { buildEvent, loadState } from './turn-event.js'

/**
 * The bot's beforeIncoming hook: it runs on a user's message or event before it is stored, and may change
 * its payload (what is stored and delivered is the changed payload) or stop it.
 */
export class BeforeIncoming {
  private readonly clock: () => number

  constructor(
    private readonly store: Store,
    private readonly directory: BotDirectory,
    private readonly units: SandboxUnits,
    private readonly hosts: BotClientHosts,
    private readonly options: { validatePayload: PayloadValidator; handoffs?: HandoffService | undefined; clock?: (() => number) | undefined },
  ) {
    this.clock = options.clock ?? Date.now
  }

  /**
   * The bot's beforeIncoming hook for messages and events of this integration, or undefined when the
   * bot has none (no code, or code without the hook).
   */
  async incomingHook(integration: IntegrationRow): Promise<IncomingHook | undefined> {
    const bot = (await this.directory.ownerOf(integration.id))?.bot
    const code = bot?.code
    // A remote bot's hooks run in its own program (the SDK's beforeIncomingMessage), not here.
    if (!bot || !code || bot.url !== null) return undefined
    const summary = await this.directory.summary(bot)
    if (!summary?.hooks.includes('beforeIncoming')) return undefined
    return async (draft) => (await this.options.handoffs?.isHandedOff(integration.id, draft.conversationId))
      // Handed off: the bot's hooks do not see the user's messages (a person answers them).
      ? { payload: draft.payload, stop: false }
      : this.run(bot, code, integration, draft)
  }

  private async run(bot: BotRow, code: string, integration: IntegrationRow, draft: IncomingDraft): Promise<{ payload: JsonObject; stop: boolean }> {
    const unchanged = { payload: draft.payload, stop: false }
    const { state } = await loadState(this.store, bot, integration.id, draft.conversationId, draft.userId)
    const event = buildEvent(bot, integration, { kind: 'draft', ...draft, createdAt: this.clock() }, state)
    const host = this.hosts.create(bot, integration, draft.conversationId, `before:${draft.id}`)
    try {
      const output = await this.units.run<BeforeIncomingOutput>(bot, { kind: 'before_incoming', entry: 'beforeIncoming', code, input: { event } }, host)
      const payload = output.payload ?? draft.payload
      const problem = draft.custom ? undefined : this.options.validatePayload(payload)
      if (problem) {
        host.log('error', `beforeIncoming returned an invalid payload (${problem}); the original payload was kept`)
        return unchanged
      }
      return { payload: payload as JsonObject, stop: output.stop === true }
    } catch (err) {
      await this.units.recordFailure(bot, draft.conversationId, 'beforeIncoming hook', err)
      return unchanged
    } finally {
      await host.flush()
    }
  }
}
