import type { IncomingDraft } from '../domain/chat-service.js'
import { handoffEventType } from '../domain/handoff-service.js'
import type { BotRow, BotStateKey, ConversationRow, EventRow, IntegrationRow, JsonObject, MessageRow, Store } from '../store/store.js'
import type { TurnInput } from './prelude-contract.js'
import { previewOf } from './preview.js'

/** What a turn runs for: an incoming message or event, or the start of a conversation (its creation by a user). */
export type Incoming = { kind: 'message'; message: MessageRow } | { kind: 'event'; event: EventRow } | { kind: 'started'; conversation: ConversationRow & { ownerId: string } }

/** A user's message or event about to be stored (beforeIncoming runs on it). */
export type IncomingDraftAt = IncomingDraft & { kind: 'draft'; createdAt: number }

/** `{ metadata }` of a user's message that has one (stored, or about to be: beforeIncoming), else nothing. */
function messageMetadata(incoming: Incoming | IncomingDraftAt): { metadata?: JsonObject } {
  const metadata = incoming.kind === 'message' ? incoming.message.metadata : incoming.kind === 'draft' ? incoming.metadata : undefined
  return metadata ? { metadata } : {}
}

/** The start of a conversation as an event id (and the seed of its replies' ids): one per conversation. */
export function startedId(conversation: Pick<ConversationRow, 'integrationId' | 'id'>): string {
  return `started:${conversation.integrationId}:${conversation.id}`
}

/** The spec's event object for an incoming message or custom event. */
export function buildEvent(bot: BotRow, integration: IntegrationRow, incoming: Incoming | IncomingDraftAt, state: TurnInput['event']['state']): TurnInput['event'] {
  const base =
    incoming.kind === 'started'
      ? { id: startedId(incoming.conversation), conversationId: incoming.conversation.id, userId: incoming.conversation.ownerId, payload: {} as JsonObject, createdAt: incoming.conversation.createdAt, messageId: undefined, custom: false }
      : incoming.kind === 'message'
      ? { id: incoming.message.id, conversationId: incoming.message.conversationId, userId: incoming.message.userId, payload: incoming.message.payload, createdAt: incoming.message.createdAt, messageId: incoming.message.id as string | undefined, custom: false }
      : incoming.kind === 'event'
        ? { id: incoming.event.id, conversationId: incoming.event.conversationId, userId: incoming.event.userId, payload: incoming.event.payload, createdAt: incoming.event.createdAt, messageId: undefined, custom: true }
        : { id: incoming.id, conversationId: incoming.conversationId, userId: incoming.userId, payload: incoming.payload, createdAt: incoming.createdAt, messageId: incoming.custom ? undefined : incoming.id, custom: incoming.custom }
  return {
    botId: bot.id,
    conversationId: base.conversationId,
    createdOn: new Date(base.createdAt).toISOString(),
    direction: 'incoming',
    id: base.id,
    integration: integration.name,
    ...(base.messageId !== undefined && { messageId: base.messageId }),
    // A user's message's metadata (the Chat API's `metadata`), beside the payload as the sandboxed client shows it.
    ...messageMetadata(incoming),
    payload: base.payload,
    preview: previewOf(base.payload),
    state,
    tags: { conversation: {}, message: {}, user: {} },
    type: incoming.kind === 'started' ? 'conversationStarted'
      : (incoming.kind === 'event' && handoffEventType(incoming.event)) || (base.custom ? 'custom' : String(base.payload.type)),
    userId: base.userId,
  }
}

function stateKeys(integrationId: string, conversationId: string, userId: string): BotStateKey[] {
  return [
    { scope: 'user', scopeId: `${integrationId}:${userId}` },
    { scope: 'conversation', scopeId: `${integrationId}:${conversationId}` },
    { scope: 'bot', scopeId: '' },
    { scope: 'flow', scopeId: `${integrationId}:${conversationId}` },
  ]
}

/** A turn's states as read before it runs (user, conversation, bot, and the flow record with its workflow variables). */
export interface LoadedState { keys: BotStateKey[]; state: Record<'user' | 'conversation' | 'bot' | 'workflow', JsonObject>; flow: JsonObject | undefined }

/** The flow record says the conversation's start turn ran (it does after any turn). */
export const isStarted = (flow: JsonObject | undefined): boolean => (flow as { started?: boolean } | undefined)?.started === true

/** A conversation turn's state (user, conversation, bot, workflow) and flow record, with their keys, in one read. */
export async function loadState(store: Store, bot: BotRow, integrationId: string, conversationId: string, userId: string): Promise<LoadedState> {
  const keys = stateKeys(integrationId, conversationId, userId)
  const [user, conversation, botState, flow] = await store.getBotStates(bot.id, keys)
  // Workflow variables live with the conversation's flow position, so a capture's answers survive between turns.
  const workflow = ((flow as { workflow?: JsonObject } | undefined)?.workflow ?? {}) as JsonObject
  return { keys, state: { user: user ?? {}, conversation: conversation ?? {}, bot: botState ?? {}, workflow }, flow }
}
