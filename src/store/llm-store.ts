/**
 * LLM usage (migrations/<dialect>/0029_llm_usage.sql; issue #28 item 5, docs/llm-usage.md): one row per call through
 * the gateway, each bot's and workspace's tokens and cost per UTC day (kept up to date with every call, for the budget
 * check), the budgets set through the Admin API, and the per-day statistics of getBotAnalytics().llm.
 * Days are numbered from the epoch: day = floor(ms / 86,400,000).
 */

/** One call, as stored (the shape of src/domain/llm/llm-usage.ts LlmCallRecord). */
export interface LlmCallRow {
  id: string
  workspaceId: string
  botId: string
  conversationId?: string | undefined
  userId?: string | undefined
  provider: string
  model: string
  inputTokens: number
  outputTokens: number
  inputCost: number
  outputCost: number
  latencyMs: number
  ttftMs?: number | undefined
  stopReason?: string | undefined
  error?: string | undefined
  promptSource?: string | undefined
  promptCategory?: string | undefined
  integrationName?: string | undefined
  via: string
  createdAt: number
}

/** What one scope (a bot, or a workspace as a whole) spent in one day. */
export interface LlmSpend { calls: number; tokens: number; cost: number }

/** A budget per UTC day; undefined: the setting's default applies; 0: unlimited. */
export interface LlmBudgetRow { dailyTokens: number | undefined; dailyCost: number | undefined; updatedAt: number }

export interface Stats { mean: number; sd: number; min: number; max: number }

/** getBotAnalytics().llm of one day (latency and tokens per second over the calls without error). */
export interface LlmDay {
  day: number
  calls: number
  errors: number
  inputTokens: number
  outputTokens: number
  latency: Stats
  tokensPerSecond: Stats
  cost: Stats & { sum: number }
}

export const LLM_TEXT_LIMIT = 200

const cut = (value: string | undefined) => (value === undefined ? undefined : value.slice(0, LLM_TEXT_LIMIT))
/** Whole, non-negative numbers of tokens and milliseconds (anything else counts 0). */
const whole = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? Math.round(n) : 0)
/** A cost that is not a finite non-negative number counts 0. */
const usd = (n: number) => (Number.isFinite(n) && n > 0 ? n : 0)

/** The call as it is stored and counted: texts cut to LLM_TEXT_LIMIT characters, amounts made whole and non-negative. */
export function normalizeLlmCall<T extends LlmCallRow>(row: T): T {
  return {
    ...row,
    conversationId: cut(row.conversationId), userId: cut(row.userId), provider: cut(row.provider)!, model: cut(row.model)!,
    inputTokens: whole(row.inputTokens), outputTokens: whole(row.outputTokens), inputCost: usd(row.inputCost), outputCost: usd(row.outputCost),
    latencyMs: whole(row.latencyMs), ttftMs: row.ttftMs === undefined ? undefined : whole(row.ttftMs),
    stopReason: cut(row.stopReason), error: cut(row.error), promptSource: cut(row.promptSource), promptCategory: cut(row.promptCategory),
    integrationName: cut(row.integrationName), via: cut(row.via)!,
  }
}

export interface LlmStore {
  /**
   * Stores the call and adds its tokens and cost to its bot's and its workspace's day, in one transaction.
   * A second record of the same id changes nothing (false); the row is stored as normalizeLlmCall makes it.
   */
  recordCall(row: LlmCallRow): Promise<boolean>
  /** What the bot, and its workspace as a whole, spent in `day`. */
  spent(workspaceId: string, botId: string, day: number): Promise<{ bot: LlmSpend; workspace: LlmSpend }>
  getBudget(scope: 'bot' | 'workspace', id: string): Promise<LlmBudgetRow | undefined>
  /** Sets (replaces) the budget of a bot or workspace; the row goes with the bot or workspace. */
  setBudget(scope: 'bot' | 'workspace', id: string, budget: LlmBudgetRow): Promise<void>
  /** The bot's last `limit` calls, oldest first, as stored (normalizeLlmCall). */
  recentCalls(botId: string, limit: number): Promise<LlmCallRow[]>
  /** The last `limit` calls made for one of the bot's conversations, oldest first (the console's turn trace; migration 0030). */
  conversationCalls(botId: string, conversationId: string, limit: number): Promise<LlmCallRow[]>
  /** Per day with at least one call, from fromDay (inclusive) to toDay (exclusive). */
  botDays(botId: string, fromDay: number, toDay: number): Promise<LlmDay[]>
}
