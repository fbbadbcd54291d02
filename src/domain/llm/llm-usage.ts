import type { LlmCallRow } from '../../store/llm-store.js'

/**
 * The seam between the LLM gateway (which calls providers) and usage accounting (which records, reports and limits
 * those calls): the gateway asks `admit` before a call and hands every call's outcome to `record` after it.
 * Issue #28; docs/llm.md, docs/llm-usage.md.
 */

/** Who a call is for: the bot (and its workspace), and, when bot code called within a turn, the conversation and user. */
export interface LlmCaller {
  workspaceId: string
  botId: string
  conversationId?: string
  userId?: string
}

/**
 * One call through the gateway, as recorded (successful or not): the stored row (src/store/llm-store.ts) with the
 * domain's narrower types. Tokens and costs are 0 when unknown; `error` is a short reason (never a key or a
 * provider's raw body); `promptSource`, `promptCategory`, `integrationName` come from the request's `meta`.
 */
export interface LlmCallRecord extends LlmCaller, Omit<LlmCallRow, 'stopReason' | 'via' | keyof LlmCaller> {
  stopReason?: 'stop' | 'max_tokens' | 'content_filter' | 'tool_calls' | 'other'
  /** Which path: the v2 cognitive API, the `llm` interface's generateContent, sandboxed bot code, or a knowledge card's answer. */
  via: 'cognitive-v2' | 'llm-interface' | 'bot-code' | 'knowledge' | 'agent'
}

export interface LlmUsage {
  /** Throws the 4xx (`errors.*`) that refuses a call once the bot's or workspace's budget for the day is spent. */
  admit(caller: LlmCaller): Promise<void>
  /**
   * Records one call's outcome once its answer went out: the answer does not wait for the write. Never throws (a
   * recording failure is logged and counted).
   */
  record(call: LlmCallRecord): void
  /** Resolves once every call recorded so far is stored: whoever reads usage waits for it first. */
  settled(): Promise<void>
}
