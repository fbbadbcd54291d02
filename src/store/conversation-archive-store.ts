/**
 * The console's read side over a bot's chat data (the Chat/Runtime API rows, no table of its own): conversations
 * found by the words of their messages, a user id or a tag value, by date, by failed turns and by handoff, newest activity
 * first; and the messages of such a set in keyset pages, for exports streamed from the database.
 */
import type { MessageRow, Page, PageRequest } from './rows.js'

export interface ArchiveFilter {
  /** The bot's integrations (all of them: the console shows every channel). */
  integrationIds: string[]
  /** The bot (its logs tell failed turns). */
  botId: string
  /** A word or phrase of a message (case-insensitive for ASCII), a user id, or a conversation or message tag value. */
  q?: string | undefined
  /** Conversations active at or after / created at or before (ms). */
  from?: number | undefined
  to?: number | undefined
  /** Only conversations with an error-level log (a failed or timed-out turn). */
  failed?: boolean | undefined
  /** Only conversations handed to a person at least once (a human handoff, open or ended). */
  handoff?: boolean | undefined
  /** One conversation (exports of a single conversation). */
  conversationId?: string | undefined
}

export interface ArchiveConversation {
  integrationId: string
  id: string
  ownerId: string | null
  createdAt: number
  lastAt: number
  messageCount: number
  tags: Record<string, string>
}

export interface ConversationArchiveStore {
  /** Newest activity first (last_at, then id, then integration id: ids are unique per integration only). */
  searchConversations(filter: ArchiveFilter, page: PageRequest): Promise<Page<ArchiveConversation>>
  /**
   * Messages of the matching conversations ordered by (conversation, integration, seq), a page at a time: the caller loops on
   * `next`, so an export of any size holds one page in memory.
   */
  exportMessages(filter: ArchiveFilter, page: PageRequest): Promise<Page<MessageRow>>
}
