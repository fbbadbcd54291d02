import type { BotLogRow, BotRow, BotStateWrite, IntegrationRow } from '../store/store.js'
import { botEndpoint, type RemoteBots } from './remote-bots.js'
import { conversationEvent } from './remote-events.js'
import type { RunFailure } from './sandbox-units.js'
import type { Incoming, LoadedState } from './turn-event.js'

export interface TurnResult {
  states: BotStateWrite[]
  logs: BotLogRow[]
  ownSeqs: number[]
  /** Why the turn's bot code failed, if it did (recorded for the dashboard: quality-store.ts). */
  failure?: RunFailure | undefined
}

/**
 * Runs one turn of a conversation; the runtime schedules (which conversation, in which order, under
 * which lease) and saves what the turn leaves. Two executors: the sandbox (the bot's deployed code:
 * SandboxTurns) and the remote one (a POST to the bot's url). A bot with a url is remote, whatever code it has.
 */
export interface TurnExecutor {
  /** How long a conversation's lease must last for one turn of this bot. */
  leaseMs(bot: BotRow): number
  /** Waits for room to run this bot's turns (bounded concurrency); the returned function gives it back. */
  admit(bot: BotRow): Promise<() => void>
  /**
   * Rejects only when the instance stops (the turn is then run again after the restart). `loaded`: the turn's
   * states as the scheduler just read them (the sandbox's start check), so the turn does not read them again.
   */
  turn(bot: BotRow, integration: IntegrationRow, incoming: Incoming, loaded?: LoadedState): Promise<TurnResult>
}

/** The turns of bots with a url: each incoming message or event POSTed to the bot (RemoteBots.deliver). */
export function remoteTurnExecutor(remote: RemoteBots): TurnExecutor {
  return {
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
