import { errors } from '../../lib/errors.js'
import type { Counter, MetricsRegistry } from '../../lib/metrics.js'
import { normalizeLlmCall, type LlmBudgetRow, type LlmCallRow, type LlmSpend } from '../../store/llm-store.js'
import type { Store } from '../../store/store.js'
import type { BotService } from '../bot-service.js'
import type { LlmCallRecord, LlmCaller, LlmUsage } from './llm-usage.js'

const DAY_MS = 86_400_000

/** A budget per UTC day: tokens (input + output) and US dollars; 0 = unlimited. */
export interface LlmBudget { dailyTokens: number; dailyCost: number }
/** The settings' defaults (PARLEY_LLM_BOT_DAILY_* and PARLEY_LLM_WORKSPACE_DAILY_*). */
export interface LlmBudgetDefaults { bot: LlmBudget; workspace: LlmBudget }

/** What updateBotLlmBudget / updateWorkspaceLlmBudget take: a number sets the limit (0 = unlimited), null goes back to the setting's. */
export interface LlmBudgetInput { dailyTokens?: number | null | undefined; dailyCost?: number | null | undefined }

/** getBotLlmBudget / getWorkspaceLlmBudget: the override, the limits in force, today's spend and when it resets. */
export interface LlmBudgetView {
  dailyTokens: number | null
  dailyCost: number | null
  effective: LlmBudget
  today: LlmSpend
  resetsAt: string
}

export interface LlmUsageOptions {
  warn: (context: object, message: string) => void
  clock?: () => number
}

/** How long a bot's or workspace's budget is kept before it is read again (another instance's change applies within it). */
const BUDGET_CACHE_MS = 5_000
const BUDGET_CACHE_ENTRIES = 10_000
const limits = (b: LlmBudget) => b.dailyTokens > 0 || b.dailyCost > 0

/**
 * Usage accounting of the LLM gateway (issue #28 item 5; docs/llm-usage.md): `record` stores every call and adds it
 * to its bot's and workspace's day (llm-store.ts), `admit` refuses a call once either's budget for the UTC day is spent.
 *
 * How admit and record interact: admit reads today's spend (two rows by primary key) and the two budgets; record adds
 * the call when it is over. Calls admitted together all see the spend before any of them, so a budget is overshot by
 * at most what the calls in flight when it was reached use (never by a call admitted after their records).
 *
 * A call is recorded after its answer went out (about half a millisecond less on every model call: bench/RESULTS.md,
 * llm-gateway), and its write is kept in `pending` until stored. Everything in this process that reads usage waits for
 * those writes first (`settled`): admit when a budget is in force, the budget views, analytics, and shutdown, so a
 * bot's next call, or its owner's next look, always sees the call before. A kill -9 loses the records of the calls
 * answered in the last milliseconds.
 */
export class LlmUsageService implements LlmUsage {
  private readonly clock: () => number
  /** Budgets in force by `scope:id`, until when they are kept (see effective). */
  private readonly budgets = new Map<string, { budget: LlmBudget; until: number }>()
  /** Records not yet stored. */
  private readonly pending = new Set<Promise<void>>()
  private metrics: {
    tokens: Counter; cost: Counter; calls: Counter; refusals: Counter; recordFailures: Counter
  } | undefined

  constructor(
    private readonly store: Store,
    private readonly bots: BotService,
    private readonly defaults: LlmBudgetDefaults,
    private readonly options: LlmUsageOptions,
  ) {
    this.clock = options.clock ?? Date.now
  }

  registerMetrics(metrics: MetricsRegistry): void {
    this.metrics = {
      tokens: metrics.counter('parley_llm_tokens_total', 'Tokens of the language-model calls recorded, by provider, model and direction (input or output)', ['provider', 'model', 'direction']),
      cost: metrics.counter('parley_llm_cost_usd_total', 'Cost of the language-model calls recorded (configured per-model prices), in US dollars, by provider and model', ['provider', 'model']),
      calls: metrics.counter('parley_llm_calls_total', 'Language-model calls recorded, by provider, model and outcome (ok or error)', ['provider', 'model', 'outcome']),
      refusals: metrics.counter('parley_llm_budget_refusals_total', 'Language-model calls refused because a daily budget was spent, by scope (bot or workspace)', ['scope']),
      recordFailures: metrics.counter('parley_llm_record_failures_total', 'Language-model calls that could not be recorded (the answer still went out; see the log)'),
    }
  }

  async admit(caller: LlmCaller): Promise<void> {
    const day = Math.floor(this.clock() / DAY_MS)
    const [bot, workspace] = await Promise.all([this.effective('bot', caller.botId), this.effective('workspace', caller.workspaceId)])
    // No limit in force (the default): nothing to read.
    if (!limits(bot) && !limits(workspace)) return
    await this.settled()
    const spent = await this.store.llm.spent(caller.workspaceId, caller.botId, day)
    const resetsAt = new Date((day + 1) * DAY_MS).toISOString()
    const check = (scope: 'bot' | 'workspace', id: string, budget: LlmBudget, used: LlmSpend) => {
      const over = budget.dailyTokens > 0 && used.tokens >= budget.dailyTokens ? { kind: 'tokens', limit: budget.dailyTokens, spent: used.tokens }
        : budget.dailyCost > 0 && used.cost >= budget.dailyCost ? { kind: 'cost', limit: budget.dailyCost, spent: used.cost } : undefined
      if (!over) return
      this.metrics?.refusals.inc({ scope })
      const amount = (n: number) => (over.kind === 'tokens' ? `${n} tokens` : `$${n.toFixed(4)}`)
      throw errors.llmBudgetSpent(
        `The ${scope === 'bot' ? `bot "${id}"` : `workspace "${id}"`}'s daily LLM ${over.kind} budget is spent: ${amount(over.spent)} used today of ${amount(over.limit)}; it resets at ${resetsAt} (midnight UTC)`,
        { scope, budget: over.kind, limit: over.limit, spent: over.spent, resetsAt },
      )
    }
    check('bot', caller.botId, bot, spent.bot)
    check('workspace', caller.workspaceId, workspace, spent.workspace)
  }

  record(call: LlmCallRecord): void {
    // Begun on the next turn of the event loop: the answer's bytes go out first, not after the write's statements.
    const write = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.write(call)).finally(() => this.pending.delete(write))
    this.pending.add(write)
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending)
  }

  private async write(call: LlmCallRecord): Promise<void> {
    const row = normalizeLlmCall(call)
    let stored: boolean
    try {
      stored = await this.store.llm.recordCall(row)
    } catch (err) {
      this.metrics?.recordFailures.inc()
      this.options.warn({ err, botId: call.botId, callId: call.id }, 'An LLM call could not be recorded (its answer went out; it is missing from usage and budgets)')
      return
    }
    const m = this.metrics
    if (!m || !stored) return
    const labels = { provider: row.provider, model: row.model }
    m.calls.inc({ ...labels, outcome: row.error === undefined ? 'ok' : 'error' })
    m.tokens.inc({ ...labels, direction: 'input' }, row.inputTokens)
    m.tokens.inc({ ...labels, direction: 'output' }, row.outputTokens)
    m.cost.inc(labels, row.inputCost + row.outputCost)
  }

  /** The model calls made for one of the bot's conversations (the last 500, oldest first): the console's turn trace. */
  async conversationCalls(workspaceId: string, botId: string, conversationId: string): Promise<LlmCallRow[]> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    await this.settled()
    return this.store.llm.conversationCalls(bot.id, conversationId, 500)
  }

  async getBotBudget(workspaceId: string, botId: string): Promise<LlmBudgetView> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    return this.view('bot', bot.id, workspaceId)
  }

  async updateBotBudget(workspaceId: string, botId: string, input: LlmBudgetInput): Promise<LlmBudgetView> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    await this.update('bot', bot.id, input)
    return this.view('bot', bot.id, workspaceId)
  }

  /** The caller's workspace's budget; `id`, the workspace the path names, must be it (another is not found). */
  async getWorkspaceBudget(workspaceId: string, id: string): Promise<LlmBudgetView> {
    if (id !== workspaceId) throw errors.notFound('Workspace', id)
    return this.view('workspace', workspaceId, workspaceId)
  }

  async updateWorkspaceBudget(workspaceId: string, id: string, input: LlmBudgetInput): Promise<LlmBudgetView> {
    if (id !== workspaceId) throw errors.notFound('Workspace', id)
    await this.update('workspace', workspaceId, input)
    return this.view('workspace', workspaceId, workspaceId)
  }

  /**
   * The limits in force: the override where set, else the setting. Kept BUDGET_CACHE_MS per bot and workspace (a call
   * reads none of them then): a change made here applies at once, one made on another instance within that time.
   */
  private async effective(scope: 'bot' | 'workspace', id: string): Promise<LlmBudget> {
    const key = `${scope}:${id}`
    const now = this.clock()
    const cached = this.budgets.get(key)
    if (cached && cached.until > now) return cached.budget
    const budget = this.merge(scope, await this.store.llm.getBudget(scope, id))
    if (this.budgets.size >= BUDGET_CACHE_ENTRIES) this.budgets.clear()
    this.budgets.set(key, { budget, until: now + BUDGET_CACHE_MS })
    return budget
  }

  private merge(scope: 'bot' | 'workspace', row: LlmBudgetRow | undefined): LlmBudget {
    return { dailyTokens: row?.dailyTokens ?? this.defaults[scope].dailyTokens, dailyCost: row?.dailyCost ?? this.defaults[scope].dailyCost }
  }

  private async update(scope: 'bot' | 'workspace', id: string, input: LlmBudgetInput): Promise<void> {
    const current = await this.store.llm.getBudget(scope, id)
    const pick = (value: number | null | undefined, before: number | undefined) => (value === undefined ? before : value === null ? undefined : value)
    await this.store.llm.setBudget(scope, id, {
      dailyTokens: pick(input.dailyTokens, current?.dailyTokens),
      dailyCost: pick(input.dailyCost, current?.dailyCost),
      updatedAt: this.clock(),
    })
    // after the write: an admit in between may have kept the old budget
    this.budgets.delete(`${scope}:${id}`)
  }

  private async view(scope: 'bot' | 'workspace', id: string, workspaceId: string): Promise<LlmBudgetView> {
    const day = Math.floor(this.clock() / DAY_MS)
    await this.settled()
    const [row, spent] = await Promise.all([this.store.llm.getBudget(scope, id), this.store.llm.spent(workspaceId, scope === 'bot' ? id : '', day)])
    return {
      dailyTokens: row?.dailyTokens ?? null,
      dailyCost: row?.dailyCost ?? null,
      effective: this.merge(scope, row),
      today: scope === 'bot' ? spent.bot : spent.workspace,
      resetsAt: new Date((day + 1) * DAY_MS).toISOString(),
    }
  }
}
