/**
 * The events a remote bot receives, in Runtime API shapes (src/domain/runtime-views.ts, the same objects the
 * Runtime API returns); src/runtime/remote-bots.ts delivers them.
 */
import { runtimeConversationView, runtimeMessageView, runtimeUserView, type RuntimeConversationView, type RuntimeMessageView, type RuntimeUserView } from '../domain/runtime-views.js'
import type { BotRow, EventRow, IntegrationRow, MessageRow, Store } from '../store/store.js'

const iso = (ms: number) => new Date(ms).toISOString()

/** Where an event's message, user and conversation are read, as the Runtime API shows them (storedViews). */
export interface ConversationViews {
  message(integration: IntegrationRow, row: MessageRow): Promise<RuntimeMessageView>
  user(integration: IntegrationRow, id: string): Promise<RuntimeUserView>
  conversation(integration: IntegrationRow, id: string): Promise<RuntimeConversationView>
  /** A Runtime API event of this id (createEvent), when the conversation's event is one. */
  runtimeEvent(bot: BotRow, id: string): Promise<{ type: string; payload: Record<string, unknown> } | undefined>
}

/**
 * The views read from the store: in the event's own integration (its rows with their tags), by the same view functions
 * as the Runtime API's routes. A user or conversation deleted since still goes out (with what is known): an event
 * never blocks its queue.
 */
export function storedViews(store: Store): ConversationViews {
  const epoch = new Date(0).toISOString()
  return {
    message: async (integration, row) => runtimeMessageView((await store.botChat.getMessage([integration.id], row.id)) ?? row),
    user: async (integration, id) => {
      const user = (await store.botChat.getUser([integration.id], id)) ?? (await store.getUser(integration.id, id))
      return user ? runtimeUserView(user) : { id, createdAt: epoch, updatedAt: epoch, tags: {} }
    },
    conversation: async (integration, id) => {
      const conversation = await store.botChat.getConversation([integration.id], id)
      return conversation
        ? runtimeConversationView({ ...conversation, integrationName: integration.name })
        : { id, createdAt: epoch, updatedAt: epoch, channel: 'channel', integration: integration.name, tags: {}, messageCount: 0 }
    },
    runtimeEvent: (bot, id) => store.runtimeEvents.get(bot.id, id),
  }
}

/** A Runtime API Event as a remote bot receives it (`event_received`, x-bp-type = its type). */
export interface RemoteEvent {
  id: string
  type: string
  payload: Record<string, unknown>
  createdAt: string
  conversationId?: string
  userId?: string
  messageId?: string
  status: 'pending'
  failureReason: null
}

/**
 * A conversation's incoming message (`message_created`: payload { message, user, conversation }) or
 * custom event of the chat integration (`chat:custom`: payload { userId, conversationId, payload },
 * as Botpress's chat integration emits it).
 */
export async function conversationEvent(views: ConversationViews, bot: BotRow, integration: IntegrationRow, incoming: { kind: 'message'; message: MessageRow } | { kind: 'event'; event: EventRow }): Promise<RemoteEvent> {
  const row = incoming.kind === 'message' ? incoming.message : incoming.event
  const base = { conversationId: row.conversationId, userId: row.userId, createdAt: iso(row.createdAt), status: 'pending' as const, failureReason: null }
  if (incoming.kind === 'event') {
    // An event the Runtime API created in this conversation (createEvent with conversationId) keeps its type
    // and payload; any other is the chat client's custom event.
    const created = await views.runtimeEvent(bot, row.id)
    if (created) return { id: row.id, type: created.type, payload: created.payload, ...base }
    return { id: row.id, type: `${integration.name}:custom`, payload: { userId: row.userId, conversationId: row.conversationId, payload: row.payload }, ...base }
  }
  const [message, user, conversation] = await Promise.all([views.message(integration, incoming.message), views.user(integration, row.userId), views.conversation(integration, row.conversationId)])
  return {
    id: row.id,
    type: 'message_created',
    payload: { message, user, conversation },
    messageId: row.id,
    ...base,
  }
}
