/**
 * The Runtime API's view of a bot's chat data (migrations/<dialect>/0006_runtime_chat.sql): the users,
 * conversations and messages the Chat API stores (same rows), with what the Runtime API adds to them —
 * tags, a conversation's channel and properties, a user's properties and attributes, a message's last
 * update — and bot-wide listing with filters. Appends stay on Store.appendMessage (one append path);
 * this part only tags what it appended.
 */
import type { ConversationRow, MessageRow, NewUser, Page, PageRequest, UserRow } from './rows.js'

export type Tags = Record<string, string>
/** A tag map update: a null (or empty) value removes the key. */
export type TagPatch = Record<string, string | null>
export type TagKind = 'user' | 'conversation' | 'message'

export interface BotChatUser extends UserRow { tags: Tags; properties: Tags | null; attributes: Tags | null }
export interface BotChatConversation extends ConversationRow { channel: string; tags: Tags; properties: Tags | null; messageCount: number }
export interface BotChatMessage extends MessageRow { tags: Tags; updatedAt: number }

export interface NewBotChatUser extends NewUser { tags: Tags; properties?: Tags | undefined; attributes?: Tags | undefined }
export interface BotChatUserPatch {
  name?: string | null | undefined
  pictureUrl?: string | null | undefined
  tags?: TagPatch | undefined
  properties?: TagPatch | undefined
  attributes?: TagPatch | undefined
}
export interface NewBotChatConversation { integrationId: string; id: string; channel: string; tags: Tags; properties?: Tags | undefined; now: number }
export interface BotChatConversationPatch { tags?: TagPatch | undefined; properties?: TagPatch | undefined }
export interface BotChatMessagePatch {
  payload?: MessageRow['payload'] | undefined
  tags?: TagPatch | undefined
  /** Replaces the whole metadata object (null: none). */
  metadata?: MessageRow['metadata'] | undefined
}

export type SortDirection = 'asc' | 'desc'
export type DateField = 'createdAt' | 'updatedAt'

/** Every filter is optional; all given filters must hold (AND). Dates are ms, exclusive bounds. */
export interface ConversationFilter {
  /** The integrations listed (one, or all of a bot's): one page across them. */
  integrationIds: string[]
  tags?: Tags | undefined
  participantIds?: string[] | undefined
  channel?: string | undefined
  afterDate?: number | undefined
  beforeDate?: number | undefined
  minMessageCount?: number | undefined
  maxMessageCount?: number | undefined
  sortField: DateField
  sortDirection: SortDirection
}

export interface UserFilter {
  integrationIds: string[]
  conversationId?: string | undefined
  tags?: Tags | undefined
  afterDate?: number | undefined
  beforeDate?: number | undefined
  rangeField: DateField
  sortField: DateField
  sortDirection: SortDirection
}

/** Newest first (createdAt, then id). */
export interface MessageFilter {
  integrationIds: string[]
  conversationId?: string | undefined
  tags?: Tags | undefined
  afterDate?: number | undefined
  beforeDate?: number | undefined
}

export interface BotChatStore {
  /** Throws UniqueViolation, inserting nothing, when the id is taken in the integration. */
  createUser(user: NewBotChatUser): Promise<BotChatUser>
  /** The user of the first of `integrationIds` (in that order) that has one with this id. */
  getUser(integrationIds: string[], id: string): Promise<BotChatUser | undefined>
  /** Users of one integration by id, in the order asked (missing ones left out). */
  getUsers(integrationId: string, ids: string[]): Promise<BotChatUser[]>
  /** The oldest user that has every one of `tags` (and is not a bot user). */
  findUser(integrationId: string, tags: Tags): Promise<BotChatUser | undefined>
  updateUser(integrationId: string, id: string, patch: BotChatUserPatch, now: number): Promise<BotChatUser | undefined>
  /** End users only (the bot's own user is left out). */
  listUsers(filter: UserFilter, page: PageRequest): Promise<Page<BotChatUser>>

  /** A conversation without owner or participant. Throws UniqueViolation when the id is taken. */
  createConversation(conversation: NewBotChatConversation): Promise<BotChatConversation>
  getConversation(integrationIds: string[], id: string): Promise<BotChatConversation | undefined>
  /** The oldest conversation of the channel that has every one of `tags`. */
  findConversation(integrationId: string, channel: string, tags: Tags): Promise<BotChatConversation | undefined>
  updateConversation(integrationId: string, id: string, patch: BotChatConversationPatch, now: number): Promise<BotChatConversation | undefined>
  listConversations(filter: ConversationFilter, page: PageRequest): Promise<Page<BotChatConversation>>

  getMessage(integrationIds: string[], id: string): Promise<BotChatMessage | undefined>
  /** The oldest message of the conversation that has every one of `tags`. */
  findMessage(integrationId: string, conversationId: string, tags: Tags): Promise<BotChatMessage | undefined>
  /** Adds tags to a message just appended (Store.appendMessage); false when it is gone. */
  tagMessage(integrationId: string, messageId: string, tags: Tags): Promise<boolean>
  updateMessage(integrationId: string, id: string, patch: BotChatMessagePatch, now: number): Promise<BotChatMessage | undefined>
  listMessages(filter: MessageFilter, page: PageRequest): Promise<Page<BotChatMessage>>

  /** Distinct values of one tag key over the integrations' users, conversations or messages, in order. */
  listTagValues(integrationIds: string[], kind: TagKind, key: string, page: PageRequest): Promise<Page<string>>
}
