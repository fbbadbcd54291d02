/**
 * Chat API shapes (wire-compat §1.5) as the webchat and the CLI see them. Shared by the browser bundle and Node:
 * this module and its siblings in shared/ use only what both have (fetch, streams, URL, TextDecoder).
 */

export interface ChatUser {
  id: string
  name?: string
  pictureUrl?: string
  createdAt: string
  updatedAt: string
}

export interface Conversation {
  id: string
  createdAt: string
  updatedAt: string
}

export interface CardAction {
  action: 'postback' | 'url' | 'say'
  label: string
  value: string
}

export interface Option {
  label: string
  value: string
}

export interface CardBody {
  title: string
  subtitle?: string
  imageUrl?: string
  actions: CardAction[]
}

export type BlocItem =
  | { type: 'text'; text: string }
  | { type: 'markdown'; markdown: string }
  | { type: 'image'; imageUrl: string }
  | { type: 'audio'; audioUrl: string }
  | { type: 'video'; videoUrl: string }
  | { type: 'file'; fileUrl: string; title?: string }
  | { type: 'location'; latitude: number; longitude: number; address?: string; title?: string }

export type MessagePayload =
  | BlocItem
  | ({ type: 'card' } & CardBody)
  | { type: 'carousel'; items: Array<{ type?: 'card' } & CardBody> }
  | { type: 'choice'; text: string; options: Option[] }
  | { type: 'dropdown'; text: string; options: Option[] }
  | { type: 'bloc'; items: BlocItem[] }

export interface Message {
  id: string
  createdAt: string
  conversationId: string
  userId: string
  payload: MessagePayload
  metadata?: Record<string, unknown>
}

/** A `message_created` signal's data: the message plus whether the bot wrote it. */
export type SignalMessage = Message & { isBot?: boolean }

export type Signal =
  | { type: 'message_created'; data: SignalMessage }
  | { type: 'message_deleted'; data: { id: string; conversationId: string; userId: string } }
  | { type: 'event_created'; data: Record<string, unknown> }
  | { type: 'participant_added' | 'participant_removed'; data: { conversationId: string; participantId: string } }
  | { type: 'ping'; data: Record<string, never> }
