import { sql, type Kysely } from 'kysely'
import { normalizeLlmCall, type LlmBudgetRow, type LlmCallRow, type LlmDay, type LlmSpend, type LlmStore, type Stats } from '../llm-store.js'

const DAY_MS = 86_400_000
/** Written into the statement (not a parameter): GROUP BY must repeat the SELECT's expression exactly. */
const D = sql.raw(String(DAY_MS))

/** The tables of migrations/<dialect>/0029_llm_usage.sql (kept here so schema.ts stays untouched). */
interface LlmTables {
  llm_calls: {
    id: string; workspace_id: string; bot_id: string; conversation_id: string | null; user_id: string | null
    provider: string; model: string; input_tokens: number; output_tokens: number; input_cost: number; output_cost: number
    latency_ms: number; ttft_ms: number | null; stop_reason: string | null; error: string | null
    prompt_source: string | null; prompt_category: string | null; integration_name: string | null; via: string; created_at: number
  }
  llm_usage_daily: { workspace_id: string; bot_id: string; day: number; calls: number; tokens: number; cost: number }
  llm_bot_budgets: { bot_id: string; daily_tokens: number | null; daily_cost: number | null; updated_at: number }
  llm_workspace_budgets: { workspace_id: string; daily_tokens: number | null; daily_cost: number | null; updated_at: number }
}

const num = (v: unknown) => Number(v ?? 0)

/** mean, population standard deviation, min and max from n, Σx, Σx², min, max (0s when n is 0). */
function stats(n: number, sum: number, squares: number, min: unknown, max: unknown): Stats {
  if (n === 0) return { mean: 0, sd: 0, min: 0, max: 0 }
  const mean = sum / n
  return { mean, sd: Math.sqrt(Math.max(0, squares / n - mean * mean)), min: num(min), max: num(max) }
}

/**
 * Both engines, the same statements. recordCall inserts the call and adds it to the two llm_usage_daily rows (the
 * bot's, and the workspace's under bot_id '') in one transaction, so `spent` reads two rows by primary key; botDays
 * reads one index range (llm_calls_bot_created) and lets the database sum (Σx and Σx² give the standard deviation).
 */
export class KyselyLlmStore implements LlmStore {
  private readonly db: Kysely<LlmTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<LlmTables>
  }

  async recordCall(call: LlmCallRow): Promise<boolean> {
    const row = normalizeLlmCall(call)
    const tokens = row.inputTokens + row.outputTokens
    const cost = row.inputCost + row.outputCost
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx.insertInto('llm_calls').values({
        id: row.id, workspace_id: row.workspaceId, bot_id: row.botId, conversation_id: row.conversationId ?? null, user_id: row.userId ?? null,
        provider: row.provider, model: row.model, input_tokens: row.inputTokens, output_tokens: row.outputTokens,
        input_cost: row.inputCost, output_cost: row.outputCost, latency_ms: row.latencyMs, ttft_ms: row.ttftMs ?? null,
        stop_reason: row.stopReason ?? null, error: row.error ?? null, prompt_source: row.promptSource ?? null,
        prompt_category: row.promptCategory ?? null, integration_name: row.integrationName ?? null, via: row.via, created_at: row.createdAt,
      }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst()
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false
      const day = Math.floor(row.createdAt / DAY_MS)
      for (const botId of [row.botId, '']) {
        await trx.insertInto('llm_usage_daily').values({ workspace_id: row.workspaceId, bot_id: botId, day, calls: 1, tokens, cost })
          .onConflict((oc) => oc.columns(['workspace_id', 'bot_id', 'day']).doUpdateSet({
            calls: sql`llm_usage_daily.calls + 1`,
            tokens: sql`llm_usage_daily.tokens + ${tokens}`,
            cost: sql`llm_usage_daily.cost + ${cost}`,
          })).execute()
      }
      return true
    })
  }

  async recentCalls(botId: string, limit: number): Promise<LlmCallRow[]> {
    return this.latest(botId, undefined, limit)
  }

  async conversationCalls(botId: string, conversationId: string, limit: number): Promise<LlmCallRow[]> {
    return this.latest(botId, conversationId, limit)
  }

  private async latest(botId: string, conversationId: string | undefined, limit: number): Promise<LlmCallRow[]> {
    let q = this.db.selectFrom('llm_calls').selectAll().where('bot_id', '=', botId)
    if (conversationId !== undefined) q = q.where('conversation_id', '=', conversationId)
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(Math.max(0, Math.trunc(limit))).execute()
    const some = <T>(v: T | null) => v ?? undefined
    return rows.reverse().map((r) => ({
      id: r.id, workspaceId: r.workspace_id, botId: r.bot_id, conversationId: some(r.conversation_id), userId: some(r.user_id),
      provider: r.provider, model: r.model, inputTokens: num(r.input_tokens), outputTokens: num(r.output_tokens),
      inputCost: num(r.input_cost), outputCost: num(r.output_cost), latencyMs: num(r.latency_ms),
      ttftMs: r.ttft_ms === null ? undefined : num(r.ttft_ms), stopReason: some(r.stop_reason), error: some(r.error),
      promptSource: some(r.prompt_source), promptCategory: some(r.prompt_category), integrationName: some(r.integration_name),
      via: r.via, createdAt: num(r.created_at),
    }))
  }

  async spent(workspaceId: string, botId: string, day: number): Promise<{ bot: LlmSpend; workspace: LlmSpend }> {
    const rows = await this.db.selectFrom('llm_usage_daily').select(['bot_id', 'calls', 'tokens', 'cost'])
      .where('workspace_id', '=', workspaceId).where('day', '=', day).where('bot_id', 'in', [botId, '']).execute()
    const of = (id: string): LlmSpend => {
      const r = rows.find((x) => x.bot_id === id)
      return { calls: num(r?.calls), tokens: num(r?.tokens), cost: num(r?.cost) }
    }
    return { bot: of(botId), workspace: of('') }
  }

  async getBudget(scope: 'bot' | 'workspace', id: string): Promise<LlmBudgetRow | undefined> {
    const row = scope === 'bot'
      ? await this.db.selectFrom('llm_bot_budgets').select(['daily_tokens', 'daily_cost', 'updated_at']).where('bot_id', '=', id).executeTakeFirst()
      : await this.db.selectFrom('llm_workspace_budgets').select(['daily_tokens', 'daily_cost', 'updated_at']).where('workspace_id', '=', id).executeTakeFirst()
    if (!row) return undefined
    return {
      dailyTokens: row.daily_tokens === null ? undefined : num(row.daily_tokens),
      dailyCost: row.daily_cost === null ? undefined : num(row.daily_cost),
      updatedAt: num(row.updated_at),
    }
  }

  async setBudget(scope: 'bot' | 'workspace', id: string, budget: LlmBudgetRow): Promise<void> {
    const values = { daily_tokens: budget.dailyTokens ?? null, daily_cost: budget.dailyCost ?? null, updated_at: budget.updatedAt }
    if (scope === 'bot') {
      await this.db.insertInto('llm_bot_budgets').values({ bot_id: id, ...values }).onConflict((oc) => oc.column('bot_id').doUpdateSet(values)).execute()
    } else {
      await this.db.insertInto('llm_workspace_budgets').values({ workspace_id: id, ...values }).onConflict((oc) => oc.column('workspace_id').doUpdateSet(values)).execute()
    }
  }

  async botDays(botId: string, fromDay: number, toDay: number): Promise<LlmDay[]> {
    const ok = sql`error IS NULL`
    const cost = sql`(input_cost + output_cost)`
    const tps = sql`CASE WHEN error IS NULL AND latency_ms > 0 THEN output_tokens * 1000.0 / latency_ms END`
    const latency = sql`CASE WHEN ${ok} THEN latency_ms END`
    const rows = (await sql`
      SELECT created_at / ${D} AS day, COUNT(*) AS calls, COUNT(error) AS errors,
        SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
        SUM(${cost}) AS cost_sum, SUM(${cost} * ${cost}) AS cost_sq, MIN(${cost}) AS cost_min, MAX(${cost}) AS cost_max,
        COUNT(${latency}) AS lat_n, SUM(${latency}) AS lat_sum, SUM(${latency} * ${latency}) AS lat_sq, MIN(${latency}) AS lat_min, MAX(${latency}) AS lat_max,
        COUNT(${tps}) AS tps_n, SUM(${tps}) AS tps_sum, SUM(${tps} * ${tps}) AS tps_sq, MIN(${tps}) AS tps_min, MAX(${tps}) AS tps_max
      FROM llm_calls
      WHERE bot_id = ${botId} AND created_at >= ${fromDay * DAY_MS} AND created_at < ${toDay * DAY_MS}
      GROUP BY created_at / ${D}
      ORDER BY day`.execute(this.db)).rows as Record<string, unknown>[]
    return rows.map((r) => {
      const calls = num(r.calls)
      const costStats = stats(calls, num(r.cost_sum), num(r.cost_sq), r.cost_min, r.cost_max)
      return {
        day: num(r.day), calls, errors: num(r.errors), inputTokens: num(r.input_tokens), outputTokens: num(r.output_tokens),
        latency: stats(num(r.lat_n), num(r.lat_sum), num(r.lat_sq), r.lat_min, r.lat_max),
        tokensPerSecond: stats(num(r.tps_n), num(r.tps_sum), num(r.tps_sq), r.tps_min, r.tps_max),
        cost: { sum: num(r.cost_sum), ...costStats },
      }
    })
  }
}
