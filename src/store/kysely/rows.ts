import type { Insertable, Selectable } from 'kysely'
import type { Database } from './schema.js'
import { UniqueViolation, type Appended, type ConversationRow, type EventRow, type JsonObject, type MessageRow, type NewEvent, type NewMessage, type SignalRecord, type UserRow } from '../store.js'

/**
 * Rows of the conversation tables as the Store's row types, and back: shared by the store parts that
 * read them (KyselyStore, KyselyBotChatStore, the SQLite fast path, PostgreSQL's append statement).
 */

export const toUser = (r: Selectable<Database['users']>): UserRow => ({
  integrationId: r.integration_id,
  id: r.id,
  name: r.name,
  pictureUrl: r.picture_url,
  profile: r.profile,
  isBot: Number(r.is_bot) === 1,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

/** owner_id '' marks a conversation without an owner (0006_runtime_chat.sql). */
export const NO_OWNER = ''
export const ownerOf = (ownerId: string): string | null => (ownerId === NO_OWNER ? null : ownerId)

export const toConversation = (r: Selectable<Database['conversations']>): ConversationRow => ({
  integrationId: r.integration_id,
  id: r.id,
  ownerId: ownerOf(r.owner_id),
  lastSeq: Number(r.last_seq),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

export const toMessage = (r: Selectable<Database['messages']>): MessageRow => ({
  id: r.id,
  integrationId: r.integration_id,
  conversationId: r.conversation_id,
  seq: Number(r.seq),
  userId: r.user_id,
  isBot: Number(r.is_bot) === 1,
  payload: JSON.parse(r.payload) as JsonObject,
  metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as JsonObject),
  botSkip: Number(r.bot_skip) === 1,
  createdAt: Number(r.created_at),
})

export const toEvent = (r: Selectable<Database['events']>): EventRow => ({
  id: r.id,
  integrationId: r.integration_id,
  conversationId: r.conversation_id,
  seq: Number(r.seq),
  userId: r.user_id,
  isBot: Number(r.is_bot) === 1,
  payload: JSON.parse(r.payload) as JsonObject,
  botSkip: Number(r.bot_skip) === 1,
  createdAt: Number(r.created_at),
})

/** A conversation's signals from its three tables, in seq order, at most `limit`. */
export function mergeSignals(
  messages: Selectable<Database['messages']>[], events: Selectable<Database['events']>[], others: Selectable<Database['conversation_signals']>[], limit: number,
): SignalRecord[] {
  const records: SignalRecord[] = [
    ...messages.map((r): SignalRecord => ({ seq: Number(r.seq), kind: 'message_created', message: toMessage(r) })),
    ...events.map((r): SignalRecord => ({ seq: Number(r.seq), kind: 'event_created', event: toEvent(r) })),
    ...others.map((r): SignalRecord => ({ seq: Number(r.seq), kind: r.type, ...JSON.parse(r.data) }) as SignalRecord),
  ]
  return records.sort((a, b) => a.seq - b.seq).slice(0, limit)
}

/** A new message's columns but its sequence number and timestamp, which the append assigns. */
export const messageColumns = (m: NewMessage): Omit<Insertable<Database['messages']>, 'seq' | 'created_at'> => ({
  id: m.id, integration_id: m.integrationId, conversation_id: m.conversationId, user_id: m.userId, is_bot: m.isBot ? 1 : 0,
  payload: JSON.stringify(m.payload), metadata: m.metadata === null ? null : JSON.stringify(m.metadata), bot_skip: m.botSkip ? 1 : 0,
})

export const eventColumns = (e: NewEvent): Omit<Insertable<Database['events']>, 'seq' | 'created_at'> => ({
  id: e.id, integration_id: e.integrationId, conversation_id: e.conversationId, user_id: e.userId, is_bot: e.isBot ? 1 : 0,
  payload: JSON.stringify(e.payload), bot_skip: e.botSkip ? 1 : 0,
})

/** The stored message, as appendMessage returns it. */
export const messageRow = (m: NewMessage, seq: number, createdAt: number): MessageRow => ({
  id: m.id, integrationId: m.integrationId, conversationId: m.conversationId, seq, userId: m.userId, isBot: m.isBot,
  payload: m.payload, metadata: m.metadata, botSkip: m.botSkip ?? false, createdAt,
})

export const eventRow = (e: NewEvent, seq: number, createdAt: number): EventRow => ({
  id: e.id, integrationId: e.integrationId, conversationId: e.conversationId, seq, userId: e.userId, isBot: e.isBot,
  payload: e.payload, botSkip: e.botSkip ?? false, createdAt,
})


/** Thrown inside an append's transaction when its id is taken (ON CONFLICT DO NOTHING inserted nothing): rolls the seq back. */
export class IdTaken extends Error {}

/**
 * The answer of an `ifAbsent` append whose id was taken (see Appended): the stored row of the same integration;
 * an id taken in another integration fails the append.
 */
export function takenAnswer<T>(append: NewMessage | NewEvent, stored: T | undefined, entity: 'Message' | 'Event'): Appended<T> {
  if (append.ifAbsent && stored) return { ...stored, existing: true }
  throw new UniqueViolation(entity)
}
