import type { JsonObject, MessageRow, SignalRecord, UserRow } from '../store/store.js'
import { conversationView, eventView, messageView, type ConversationView, type EventView } from './chat-views.js'
import type { StreamSignal } from './conversation-stream.js'

/**
 * Row → the shapes of Botpress's webchat API (`@botpress/webchat-client@0.7.3`, llm-wire.md §4), which the official
 * `@botpress/webchat` renders. They differ from the Chat API's in three places: a user carries `data` and
 * `attributes`, a message its `feedback`, and what the webchat sent for a button (`{text: label, value}`) reads
 * back as it was sent. Conversations and events have the Chat API's shape.
 */
export interface WebchatUser { id: string; createdAt: string; updatedAt: string; name?: string; pictureUrl?: string; data?: unknown; attributes?: Record<string, string> }
export interface WebchatMessage {
  id: string; createdAt: string; payload: JsonObject; userId: string; conversationId: string
  metadata?: JsonObject; feedback?: { value: 'positive' | 'negative'; comment?: string }
}

const iso = (ms: number) => new Date(ms).toISOString()

/** `userData` is kept in the user's profile as JSON text (an object or a string): read back as it was given. */
export function readUserData(profile: string | null): unknown {
  if (profile === null || profile === '') return undefined
  try {
    return JSON.parse(profile) as unknown
  } catch {
    return profile
  }
}

export function webchatUserView(u: UserRow, attributes?: Record<string, string>): WebchatUser {
  const data = readUserData(u.profile)
  return {
    id: u.id,
    createdAt: iso(u.createdAt),
    updatedAt: iso(u.updatedAt),
    ...(u.name !== null && { name: u.name }),
    ...(u.pictureUrl !== null && { pictureUrl: u.pictureUrl }),
    ...(data !== undefined && { data }),
    ...(attributes && Object.keys(attributes).length > 0 && { attributes }),
  }
}

export { conversationView as webchatConversationView, eventView as webchatEventView }
export type { ConversationView as WebchatConversation, EventView as WebchatEvent }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A message as the official webchat reads it:
 * - its feedback (`{value, comment?}`) out of the metadata where ChatService.setMessageFeedback keeps it;
 * - a user's answer to a button, stored as its value with the label in `metadata.webchat.label` (as Parley's own
 *   webchat sends it), reads `{type:'text', text: label, value}`: the bubble shows what was clicked;
 * - a reply that was streamed (`metadata.streamId`) carries the stream's id as `metadata.clientMessageId`, so the
 *   webchat replaces the draft it showed (webchatSink below) with it instead of adding a second bubble.
 */
export function webchatMessageView(m: MessageRow): WebchatMessage {
  const base = messageView(m)
  const { feedback, ...rest } = m.metadata ?? {}
  let metadata: JsonObject | undefined = m.metadata === null ? undefined : rest
  let payload = base.payload
  const label = isObject(rest.webchat) ? rest.webchat.label : undefined
  if (!m.isBot && payload.type === 'text' && typeof label === 'string' && label !== payload.text) {
    payload = { type: 'text', text: label, value: payload.text as string }
  }
  if (payload.type === 'bloc' && Array.isArray(payload.items)) payload = { ...payload, items: payload.items.map(wrapBlocItem) } as JsonObject
  if (typeof rest.streamId === 'string' && rest.clientMessageId === undefined) metadata = { ...rest, clientMessageId: rest.streamId }
  const view: WebchatMessage = { id: base.id, createdAt: base.createdAt, payload, userId: base.userId, conversationId: base.conversationId }
  if (metadata !== undefined && Object.keys(metadata).length > 0) view.metadata = metadata
  if (isObject(feedback) && (feedback.value === 'positive' || feedback.value === 'negative')) {
    view.feedback = { value: feedback.value, ...(typeof feedback.comment === 'string' && { comment: feedback.comment }) }
  }
  return view
}

/** A bloc's item as the webchat reads it (`{type, payload: {…}}`); Parley's are flat (`{type, text}`). */
function wrapBlocItem(item: unknown): unknown {
  if (!isObject(item) || typeof item.type !== 'string' || 'payload' in item) return item
  const { type, ...payload } = item
  return { type, payload }
}

/** The reverse, for a bloc the webchat sends (a file with text). */
export function unwrapBlocItem(item: unknown): unknown {
  if (!isObject(item) || typeof item.type !== 'string' || !isObject(item.payload)) return item
  return { ...item.payload, type: item.type }
}

export interface WebchatSignal { type: string; data: unknown }

/**
 * After a user's message: `message_status_changed` to `processing` when the bot gets it (its turn is queued with the
 * append; a message the bot's beforeIncoming hook stopped gets none). Webchat 4.5.2 marks the message it sent
 * (by `metadata.clientMessageId`) with it; it has no use for the other statuses.
 */
export function webchatStatusSignal(s: SignalRecord): WebchatSignal | undefined {
  if (s.kind !== 'message_created' || s.message.isBot || s.message.botSkip) return undefined
  return { type: 'message_status_changed', data: { message: webchatMessageView(s.message), oldStatus: 'pending', newStatus: 'processing' } }
}

/**
 * A conversation signal as the webchat's stream carries it, or undefined for one it has no signal for
 * (`message_deleted`; a user's own custom events). A bot's event goes out as botEventSignal says.
 */
export function webchatSignal(s: SignalRecord): WebchatSignal | undefined {
  switch (s.kind) {
    case 'message_created':
      return { type: 'message_created', data: webchatMessageView(s.message) }
    case 'event_created':
      return s.event.isBot ? botEventSignal(s.event.payload) : undefined
    case 'participant_added': {
      const at = new Date().toISOString()
      return { type: 'participant_added', data: { conversationId: s.conversationId, participant: { id: s.participantId, createdAt: at, updatedAt: at } } }
    }
    case 'participant_removed':
      return { type: 'participant_removed', data: { conversationId: s.conversationId, participantId: s.participantId } }
    case 'message_deleted':
      return undefined
  }
}

/**
 * A bot's event on the webchat's stream. Botpress's webchat integration has actions for these; a Parley bot sends them
 * as events (`client.createEvent`): `{type:'webchat_visibility', visibility:'show'|'hide'|'toggle'}` opens, closes or
 * toggles the page's chat, `{type:'webchat_config', config:{…}}` changes its configuration; any other payload is a
 * `custom` signal (the page's `customEvent`). All three are data for the page: nothing in them is run.
 */
function botEventSignal(payload: JsonObject): WebchatSignal {
  if (payload.type === 'webchat_visibility' && (payload.visibility === 'show' || payload.visibility === 'hide' || payload.visibility === 'toggle')) {
    return { type: 'webchat_visibility', data: { visibility: payload.visibility } }
  }
  if (payload.type === 'webchat_config' && isObject(payload.config)) return { type: 'webchat_config', data: { config: payload.config } }
  return { type: 'custom', data: { event: payload } }
}

/**
 * A reply being written, for webchat 4.5.2, which has no stream signals: a draft message whose text grows with each
 * piece (`message_updated` replaces a message by id, or by `metadata.clientMessageId`), replaced by the final message
 * (webchatMessageView gives it the same clientMessageId). Per stream of one listener.
 */
export class WebchatDrafts {
  private readonly drafts = new Map<string, string>()

  /** The draft after this piece, or undefined for an abort (the draft stays as it was: the webchat cannot remove it). */
  apply(signal: StreamSignal): WebchatSignal | undefined {
    if (signal.type === 'message_stream_abort') {
      this.drafts.delete(signal.streamId)
      return undefined
    }
    // Bounded: a listener keeps at most a few drafts (a turn writes one at a time).
    if (!this.drafts.has(signal.streamId) && this.drafts.size >= 8) this.drafts.delete(this.drafts.keys().next().value!)
    const text = (this.drafts.get(signal.streamId) ?? '') + signal.delta
    this.drafts.set(signal.streamId, text)
    return {
      type: 'message_updated',
      data: {
        id: signal.streamId, createdAt: signal.createdAt, conversationId: signal.conversationId, userId: signal.userId,
        payload: { type: 'text', text }, metadata: { clientMessageId: signal.streamId, streaming: true },
      },
    }
  }

  /** The final message of a stream arrived: its draft is done. */
  done(streamId: unknown): void {
    if (typeof streamId === 'string') this.drafts.delete(streamId)
  }
}
