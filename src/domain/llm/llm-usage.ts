/**
 * The seam between the LLM gateway (which calls providers) and usage accounting (which records, reports and limits
 * those calls): the gateway asks `admit` before a call and hands every call's outcome to `record` after it.
 * Issue #28; docs/llm.md.
 */

/** Who a call is for: the bot (and its workspace), and, when bot code called within a turn, the conversation and user. */
export interface LlmCaller {
  workspaceId: string
  botId: string
  conversationId?: string
  userId?: string
}

/** One call through the gateway, as recorded (successful or not). Tokens and costs are 0 when unknown. */
export interface LlmCallRecord extends LlmCaller {
  id: string
  /** The provider's name as configured (e.g. `ollama`, `openai`), and the model there (without the provider prefix). */
  provider: string
  model: string
  inputTokens: number
  outputTokens: number
  /** USD, from the configured per-model prices (0 by default). */
  inputCost: number
  outputCost: number
  /** Wall time of the whole call, and to the first streamed token (undefined when not streamed). */
  latencyMs: number
  ttftMs?: number
  stopReason?: 'stop' | 'max_tokens' | 'content_filter' | 'tool_calls' | 'other'
  /** A short reason when the call failed (never a key or a provider's raw body). */
  error?: string
  /** `meta.promptSource` / `meta.promptCategory` / `meta.integrationName` of the request, when given (≤ 200 chars each). */
  promptSource?: string
  promptCategory?: string
  integrationName?: string
  /** Which path: the v2 cognitive API, the `llm` interface's generateContent, or sandboxed bot code. */
  via: 'cognitive-v2' | 'llm-interface' | 'bot-code'
  createdAt: number
}

export interface LlmUsage {
  /** Throws the 4xx (`errors.*`) that refuses a call once the bot's or workspace's budget for the day is spent. */
  admit(caller: LlmCaller): Promise<void>
  /** Records one call's outcome (never throws: a recording failure is logged, the answer still goes out). */
  record(call: LlmCallRecord): Promise<void>
}
