/**
 * What the bot runtime records about how well a bot serves (migrations/<dialect>/0015_bot_quality.sql): its failed
 * and timed-out conversation turns, and its knowledge searches with whether they found a good passage. Both are
 * written once per turn and search (deterministic keys, re-recording is a no-op) and read back per day by the
 * analytics read model (analytics-store.ts botQuality).
 */

/** How a turn's bot code failed: it threw, it was stopped at its time budget, ran out of memory, or its worker crashed. */
export type TurnFailureReason = 'error' | 'timeout' | 'memory' | 'crashed'

export interface TurnFailureRow {
  botId: string
  /** The message, event or conversation start the turn ran for (one row per turn); `delivery:<message id>` for a delivery. */
  sourceId: string
  conversationId: string | null
  /**
   * `delivery`: a bot message an installed integration did not take (src/runtime/integration-delivery.ts); `hosted`: the
   * process of the bot's deployed bundle crashed or was stopped at a limit (src/runtime/hosted/hosted-processes.ts).
   */
  kind: 'message' | 'event' | 'start' | 'delivery' | 'hosted'
  reason: TurnFailureReason
  createdAt: number
}

export interface KnowledgeSearchRow {
  botId: string
  /** Unique per bot; the same id again is not recorded twice. */
  id: string
  conversationId: string | null
  /** The question (at most QUALITY_LIMITS.queryChars characters of it). */
  query: string
  /** No passage reached the relevance threshold. */
  noAnswer: boolean
  /** The best passage's relevance, null when the search returned none at all. */
  bestRelevance: number | null
  createdAt: number
}

export const QUALITY_LIMITS = { queryChars: 500 }

export interface QualityStore {
  /** Records a failed turn; a second record of the same (bot, source) is ignored. */
  recordTurnFailure(row: TurnFailureRow): Promise<void>
  /** Records a knowledge search; a second record of the same (bot, id) is ignored. */
  recordKnowledgeSearch(row: KnowledgeSearchRow): Promise<void>
}
