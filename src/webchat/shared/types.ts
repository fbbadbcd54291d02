/**
 * Chat API shapes (wire-compat §1.5) as the webchat and the CLI see them. Shared by the browser bundle and Node:
 * this module and its siblings in shared/ use only what both have (fetch, streams, URL, TextDecoder).
 */

import type { CardPayload, ChoiceOption, User } from '../../sdk.js'

// The wire shapes are the SDK's (src/sdk.ts); these names are the ones the webchat code reads best with.
export type { BlocItem, CardAction, Conversation, Message, MessagePayload } from '../../sdk.js'
import type { Message } from '../../sdk.js'
export type ChatUser = User
export type Option = ChoiceOption
/** A card without its `type`, as rendered inside a carousel too. */
export type CardBody = Omit<CardPayload, 'type'>

/** A `message_created` signal's data: the message plus whether the bot wrote it. */
export type SignalMessage = Message & { isBot?: boolean }

export type Signal =
  | { type: 'message_created'; data: SignalMessage }
  | { type: 'message_deleted'; data: { id: string; conversationId: string; userId: string } }
  | { type: 'event_created'; data: Record<string, unknown> }
  | { type: 'participant_added' | 'participant_removed'; data: { conversationId: string; participantId: string } }
  /** Keep-alive; `typing` says the bot started or stopped typing (docs/webchat.md). */
  | { type: 'ping'; data: { typing?: boolean } }
  /** A reply being produced, piece by piece (docs/webchat.md "Streamed replies"). */
  | { type: 'message_stream_delta'; data: { streamId: string; conversationId: string; userId: string; createdAt: string; sequence: number; delta: string } }
  | { type: 'message_stream_complete'; data: { streamId: string; message: SignalMessage } }
  | { type: 'message_stream_abort'; data: { streamId: string; conversationId: string } }
