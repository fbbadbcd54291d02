import type { ConversationRow, EventRow, JsonObject, MessageRow, SignalRecord, UserRow } from '../store/store.js'

/**
 * Row → wire object. One function per resource, used by every operation and by the stream, so
 * that what a create returns, what the stream delivers and what get/list return are the same object.
 */
const iso = (ms: number) => new Date(ms).toISOString()

export interface UserView { id: string; name?: string; pictureUrl?: string; profile?: string; createdAt: string; updatedAt: string }
export interface ConversationView { id: string; createdAt: string; updatedAt: string }
export interface MessageView { id: string; createdAt: string; payload: JsonObject; userId: string; conversationId: string; metadata?: JsonObject }
export interface EventView { id: string; createdAt: string; payload: JsonObject; conversationId: string; userId: string }
export interface SignalView { type: string; data: Record<string, unknown> }

export function userView(u: UserRow): UserView {
  return {
    id: u.id,
    ...(u.name !== null && { name: u.name }),
    ...(u.pictureUrl !== null && { pictureUrl: u.pictureUrl }),
    ...(u.profile !== null && { profile: u.profile }),
    createdAt: iso(u.createdAt),
    updatedAt: iso(u.updatedAt),
  }
}

export function conversationView(c: ConversationRow): ConversationView {
  return { id: c.id, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) }
}

export function messageView(m: MessageRow): MessageView {
  return {
    id: m.id,
    createdAt: iso(m.createdAt),
    payload: m.payload,
    userId: m.userId,
    conversationId: m.conversationId,
    ...(m.metadata !== null && { metadata: m.metadata }),
  }
}

export function eventView(e: EventRow): EventView {
  return { id: e.id, createdAt: iso(e.createdAt), payload: e.payload, conversationId: e.conversationId, userId: e.userId }
}

export function signalView(s: SignalRecord): SignalView {
  switch (s.kind) {
    case 'message_created':
      return { type: s.kind, data: { ...messageView(s.message), isBot: s.message.isBot } }
    case 'event_created':
      return { type: s.kind, data: { ...eventView(s.event), isBot: s.event.isBot } }
    case 'participant_added':
    case 'participant_removed':
      return { type: s.kind, data: { conversationId: s.conversationId, participantId: s.participantId } }
    case 'message_deleted':
      return { type: s.kind, data: { id: s.id, conversationId: s.conversationId, userId: s.userId } }
  }
}
