import type { BotRow, IntegrationRow, JsonObject } from '../store/store.js'
import type { TurnInput } from './prelude-contract.js'

/**
 * A bot-level event: an event of the Runtime API that has no conversation (createEvent without
 * conversationId, a scheduled one once due, `state_expired`). RuntimeEventService claims it from its
 * durable queue and hands it to BotRuntime.deliverBotEvent, the one seam where a bot gets such an
 * event: a sandboxed bot runs a bot-level turn; a bot served elsewhere (`url`) would get it as an
 * HTTP delivery instead. The event id is stable across redeliveries (a delivery whose lease expired
 * is made again, so at least once): a receiver can dedupe on it.
 */
export interface BotLevelEvent {
  id: string
  botId: string
  type: string
  payload: JsonObject
  userId: string | null
  messageId: string | null
  workflowId: string | null
  createdAt: number
}

/** What became of a delivery: the event's final status (and why, when not processed). */
export type BotEventOutcome =
  | { status: 'processed' }
  | { status: 'ignored'; reason: string }
  | { status: 'failed'; reason: string }

/** The event object a sandboxed bot's hooks see for a bot-level event: no conversation, `type` as created. */
export function botLevelTurnEvent(bot: BotRow, integration: IntegrationRow, event: BotLevelEvent, state: TurnInput['event']['state']): TurnInput['event'] {
  return {
    botId: bot.id,
    createdOn: new Date(event.createdAt).toISOString(),
    direction: 'incoming',
    id: event.id,
    integration: integration.name,
    payload: event.payload,
    preview: `${event.type} event`,
    state,
    tags: { conversation: {}, message: {}, user: {} },
    type: event.type,
    ...(event.userId !== null && { userId: event.userId }),
    ...(event.messageId !== null && { messageId: event.messageId }),
  }
}
