import type { BotRow, IntegrationRow } from '../store/store.js'
import type { BotLevelEvent } from '../domain/runtime-event-service.js'
import type { TurnInput } from './prelude-contract.js'

export type { BotEventOutcome, BotLevelEvent } from '../domain/runtime-event-service.js'

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
