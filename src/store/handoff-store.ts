/**
 * Human handoffs (migrations/<dialect>/0013_handoffs.sql): a conversation of a bot's chat integration
 * handed to a workspace member, and the members' internal notes on it. At most one open (waiting or
 * active) handoff per conversation. Claims are atomic across instances: one conditional UPDATE.
 */
import type { Page, PageRequest } from './rows.js'

export type HandoffStatus = 'waiting' | 'active' | 'ended'

export interface HandoffRow {
  id: string
  botId: string
  integrationId: string
  conversationId: string
  /** The conversation's user (its owner, or the author of the message that started it). */
  userId: string
  status: HandoffStatus
  reason: string | null
  requestedAt: number
  /** The member's account id, and their display name when they claimed. */
  claimedBy: string | null
  claimedName: string | null
  claimedAt: number | null
  endedAt: number | null
}

export interface HandoffNoteRow { id: string; handoffId: string; memberId: string; text: string; createdAt: number }

export type NewHandoff = Pick<HandoffRow, 'id' | 'botId' | 'integrationId' | 'conversationId' | 'userId' | 'reason' | 'requestedAt'>

/** One handoff's timing, for statistics (wait = claimedAt - requestedAt). */
export interface HandoffTiming { requestedAt: number; claimedAt: number | null; endedAt: number | null }

export type ClaimResult =
  | { outcome: 'claimed'; handoff: HandoffRow }
  /** Someone else holds it (the row as it is). */
  | { outcome: 'taken'; handoff: HandoffRow }
  /** No such open handoff (ended meanwhile, or never existed). */
  | { outcome: 'closed' }

export interface HandoffStore {
  /**
   * Opens a handoff for a conversation, unless one is open already: then that one is returned
   * (`created: false`), also when two starts race (the partial unique index decides).
   */
  open(handoff: NewHandoff): Promise<{ handoff: HandoffRow; created: boolean }>
  /** The conversation's open handoff (waiting or active), if any. */
  getOpen(integrationId: string, conversationId: string): Promise<HandoffRow | undefined>
  /**
   * Whether a handoff of the conversation covered the instant `at`: requested at or before it, and not ended
   * by then. The bot runtime asks it for each incoming message (its createdAt), so that a message written
   * during a handoff goes to the agent even when the runtime reaches it after the handoff ended.
   */
  coveredAt(integrationId: string, conversationId: string, at: number): Promise<boolean>
  /** The conversation's open handoff, else its latest ended one. */
  latest(botId: string, conversationId: string): Promise<HandoffRow | undefined>
  /** A bot's handoffs, oldest request first (an inbox: who waits longest comes first), optionally of one status. */
  list(botId: string, status: HandoffStatus | undefined, page: PageRequest): Promise<Page<HandoffRow>>
  /**
   * Claims an open handoff for a member: atomic (one conditional UPDATE: free, or held by the same
   * member). Claiming one's own claim again is a no-op success (claimedAt unchanged).
   */
  claim(id: string, memberId: string, memberName: string, now: number): Promise<ClaimResult>
  /** Ends an open handoff; undefined when it was not open (ended already). */
  end(id: string, now: number): Promise<HandoffRow | undefined>
  addNote(note: HandoffNoteRow): Promise<void>
  /** A handoff's notes, oldest first (at most `limit`). */
  notes(handoffId: string, limit: number): Promise<HandoffNoteRow[]>
  /** The notes of several handoffs (a listing), oldest first, grouped by handoff id. */
  notesOf(handoffIds: string[], limitEach: number): Promise<Map<string, HandoffNoteRow[]>>
  /** Timings of a bot's handoffs requested in [from, to). */
  timings(botId: string, from: number, to: number): Promise<HandoffTiming[]>
}
