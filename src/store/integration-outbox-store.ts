/**
 * Outgoing delivery to integrations served elsewhere (migrations/<dialect>/0016_integration_outbox.sql): per
 * conversation of an installed integration, a cursor over the conversation's log (every bot message after it is
 * still to be sent as message_created) and a lease (one sender per conversation, cluster-wide). The log is the
 * queue: a bot message is in it once appended, so nothing is lost by a crash between the append and the send.
 */

/** Where a conversation's delivery stands: sent or given up through `deliveredSeq`, the log ends at `lastSeq`. */
export interface OutboxCursor { deliveredSeq: number; lastSeq: number }

export interface IntegrationOutboxStore {
  /**
   * Conversations of installed integrations (any bot) whose log goes past their delivery cursor and whose lease is
   * free or expired at `now`: the sweep's work (what a dead instance left, a missed notification).
   */
  behind(now: number, limit: number): Promise<{ integrationId: string; conversationId: string }[]>
  /**
   * Leases the conversation's delivery to `owner` until now + ttlMs when the lease is free, expired or already
   * `owner`'s (its row made at cursor 0 when missing). Undefined when another owner holds it or the conversation is gone.
   */
  claim(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<OutboxCursor | undefined>
  /** Moves the lease of `owner` to `until`; false when `owner` no longer holds it (expired and taken, or released). */
  renew(integrationId: string, conversationId: string, owner: string, until: number): Promise<boolean>
  /** Moves the cursor forward to `seq` (never back) while `owner` holds the lease; false when it does not. */
  advance(integrationId: string, conversationId: string, owner: string, seq: number): Promise<boolean>
  /** Gives the lease back (claimable at once) and answers where the conversation stands (undefined: gone). */
  release(integrationId: string, conversationId: string, owner: string): Promise<OutboxCursor | undefined>
  /** Where the conversation's delivery stands (cursor 0 when it has no row yet); undefined when the conversation is gone. */
  cursor(integrationId: string, conversationId: string): Promise<OutboxCursor | undefined>
}
