/*
 * The rows and values the Store reads and writes (docs/architecture.md): shared by the Store interface and its
 * aggregates' repositories, which import them from here (store.ts re-exports them for everyone else).
 */
import type { StatePatch } from '../lib/state-patch.js'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

export interface WorkspaceRow { id: string; name: string; createdAt: number; updatedAt: number }
export interface AccountRow { id: string; email: string; displayName: string; createdAt: number; updatedAt: number }
export interface AccessTokenRow { id: string; accountId: string; note: string; createdAt: number }

export interface BotRow {
  id: string
  workspaceId: string
  name: string
  description: string | null
  tags: Record<string, string>
  dev: boolean
  signingSecret: string
  code: string | null
  /** Seconds per hook, action or card run; null: the instance default. */
  maxExecutionTime: number | null
  deployedAt: number | null
  /** Where a remote bot (an @botpress/sdk program) receives its events; null: turns run in the sandbox. */
  url: string | null
  /** The bot's webchat settings (src/webchat/shared/webchat-config.ts); null: none set. */
  webchat: JsonObject | null
  /** The bot's own declared actions (createBot/updateBot `actions`); null: never declared (migrations 0025). */
  actions: JsonObject | null
  createdAt: number
  updatedAt: number
}

export interface IntegrationRow {
  id: string
  botId: string
  name: string
  webhookId: string
  encryptionKey: string
  enabled: boolean
  configuration: JsonObject
  createdAt: number
  updatedAt: number
}

export interface UserRow {
  integrationId: string
  id: string
  name: string | null
  pictureUrl: string | null
  profile: string | null
  isBot: boolean
  createdAt: number
  updatedAt: number
}

export interface ConversationRow {
  integrationId: string
  id: string
  /** The end user who created it through the Chat API; null for a conversation the Runtime API created (no owner, no first participant). */
  ownerId: string | null
  lastSeq: number
  createdAt: number
  updatedAt: number
}

/** An event of a conversation's log (its seq shared with the messages and signals). */
export interface EventRow {
  id: string
  integrationId: string
  conversationId: string
  seq: number
  userId: string
  isBot: boolean
  payload: JsonObject
  /** The bot's beforeIncoming hook stopped it: no turn runs for it. */
  botSkip: boolean
  createdAt: number
}

/** A message of a conversation's log: an event's fields and the message's metadata. */
export interface MessageRow extends EventRow {
  metadata: JsonObject | null
}

export interface MemberRow { workspaceId: string; account: AccountRow; role: string; createdAt: number; updatedAt: number }
export interface BotApiKeyRow { id: string; botId: string; note: string; createdAt: number }

/** Store.deleteBot: blobs the bot's deleted rows referenced, for the caller to delete. */
export interface DeletedBot {
  /** Bodies of the bot's webhook deliveries that were still queued. */
  webhookBlobNames: string[]
}

export interface BotListFilter {
  workspaceId: string
  dev?: boolean | undefined
  tags?: Record<string, string> | undefined
  integrationNames?: string[] | undefined
  sortField: 'createdAt' | 'updatedAt'
  sortDirection: 'asc' | 'desc'
}

export interface BotPatch {
  name?: string | undefined
  description?: string | null | undefined
  dev?: boolean | undefined
  code?: string | null | undefined
  maxExecutionTime?: number | null | undefined
  deployedAt?: number | undefined
  /** null: no remote url (turns run in the sandbox). */
  url?: string | null | undefined
  /** null removes the tag. */
  tags?: Record<string, string | null> | undefined
  /** The whole webchat configuration (null: none). */
  webchat?: JsonObject | null | undefined
  /** The whole declared actions object (null: none declared). */
  actions?: JsonObject | null | undefined
}

/** listBotLogs: a time range (ms, inclusive), a level, one conversation. */
export interface BotLogFilter { from?: number | undefined; to?: number | undefined; level?: string | undefined; conversationId?: string | undefined }
export interface BotLogRow { id: string; botId: string; at: number; level: string; message: string; conversationId: string | null }
export interface BotStateKey { scope: 'user' | 'conversation' | 'bot' | 'flow'; scopeId: string }
/**
 * A state to save: `data` replaces the stored object; `patch` changes only its top-level keys, applied
 * to the stored object inside the write (concurrent turns of other conversations keep their keys).
 */
export type BotStateWrite = BotStateKey & ({ data: JsonObject; patch?: never } | { patch: StatePatch<Json>; data?: never })

export interface ParticipantRow { user: UserRow; joinedAt: number }

/** A conversation signal in sequence order, as replayed to a stream. */
export type SignalRecord =
  | { seq: number; kind: 'message_created'; message: MessageRow }
  | { seq: number; kind: 'event_created'; event: EventRow }
  | { seq: number; kind: 'participant_added' | 'participant_removed'; conversationId: string; participantId: string }
  | { seq: number; kind: 'message_deleted'; id: string; conversationId: string; userId: string }

/** Keyset page: `after` is an opaque position returned by the previous page. */
export interface PageRequest { after?: string | undefined; limit: number }
export interface Page<T> { items: T[]; next?: string | undefined }

/** Thrown by the store when a unique key is taken; the domain turns it into 409. */
export class UniqueViolation extends Error {
  constructor(readonly entity: string) {
    super(`${entity} already exists`)
    this.name = 'UniqueViolation'
  }
}

export interface NewUser {
  integrationId: string
  id: string
  name?: string | null | undefined
  pictureUrl?: string | null | undefined
  profile?: string | null | undefined
  isBot?: boolean
  now: number
}

export interface UserPatch { name?: string | undefined; pictureUrl?: string | undefined; profile?: string | undefined }

/** A pub/sub publish (channel and message) that announces an append. */
export interface AppendNotification {
  channel: string
  message: string
}

/** An event to append to a conversation's log (its seq and createdAt are the store's). */
export interface NewEvent {
  id: string
  integrationId: string
  conversationId: string
  userId: string
  isBot: boolean
  payload: JsonObject
  botSkip?: boolean
  /** Append only if `userId` takes part in the conversation (checked in the same transaction); undefined otherwise. */
  requireParticipant?: boolean
  /** What to publish once the append is committed; sent by the store itself when `sendsAppendNotifications`. */
  notify?: readonly AppendNotification[]
  /** See AppendOnce: a taken id appends nothing and answers the stored row. */
  ifAbsent?: boolean
  now: number
}

/** A message to append: an event's fields and the message's metadata. */
export interface NewMessage extends NewEvent {
  metadata: JsonObject | null
}

/**
 * An append's answer. With `ifAbsent`, an id already taken in the integration appends nothing (no row, no seq, no
 * notification) and answers the stored row marked `existing`: checked inside the append's own statement or
 * transaction (INSERT … ON CONFLICT DO NOTHING), never by a read before it. Without it, a taken id fails the append.
 */
export type Appended<T> = T & { readonly existing?: true }

export interface BotCursor { botSeq: number; lastSeq: number }
export interface BotTurnEnd {
  botId: string
  integrationId: string
  conversationId: string
  seq: number
  states: BotStateWrite[]
  logs: BotLogRow[]
  now: number
  lease?: { owner: string; ttlMs: number }
  /** The owner whose lease the turn's end lets go (releaseBotConversation in the same transaction). */
  release?: string
}
