/**
 * LLM usage accounting (issue #28 item 5, docs/llm-usage.md), fed with the call records the gateway hands to
 * LlmUsage.record (no provider is involved in this part): getBotAnalytics().llm through the official
 * `@botpress/client@1.45.0` per UTC day; budgets from the settings and the Admin API (getBotLlmBudget,
 * updateBotLlmBudget, getWorkspaceLlmBudget, updateWorkspaceLlmBudget), `admit` refusing 413 LimitExceeded once
 * the bot's or the workspace's day is spent (the ApiError the gateway's routes answer with); `record` never throwing
 * nor holding the answer (its write is waited for by every reader: admit, the budget views, analytics);
 * the Prometheus series; bad budget bodies are 400s.
 */
import { Writable } from 'node:stream'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, expectError } from '../helpers/admin-client.js'
import { expectClose, llmCall, stats } from '../helpers/llm-calls.js'
import { ApiError } from '../../src/lib/errors.js'

const DAY = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const nextMidnight = () => new Date((Math.floor(Date.now() / DAY) + 1) * DAY).toISOString()

/** What admit threw (failing when it let the call through). */
async function refusal(p: Promise<void>): Promise<ApiError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err, 'admit let the call through').toBeInstanceOf(ApiError)
  return err as ApiError
}

describe('e2e: LLM usage, budgets and analytics', () => {
  let h: Harness
  let admin: ReturnType<typeof adminClient>
  let ws: string
  let logText = ''
  const newBot = async (name: string) => (await admin('POST', '/bots', { body: { name } })).body.bot.id as string
  const caller = (botId: string) => ({ workspaceId: ws, botId })

  beforeAll(async () => {
    // The settings' defaults: a bot may use 1000 tokens a day, a workspace $1.
    // Its warnings are kept (a call that cannot be recorded is logged).
    const stream = new Writable({ write(chunk, _encoding, callback) { logText += String(chunk); callback() } })
    h = await startParley({ listen: true, env: { PARLEY_LLM_BOT_DAILY_TOKENS: '1000', PARLEY_LLM_WORKSPACE_DAILY_COST: '1' }, logger: { level: 'warn', stream } })
    admin = adminClient(h)
    ws = h.credentials.workspaceId
  })
  afterAll(async () => h?.close())

  it('getBotAnalytics().llm (official client): each day\'s calls, errors, tokens, latency, tokens/s and cost', async () => {
    const botId = await newBot('analytics')
    const now = Date.now()
    const today = [
      llmCall(ws, botId, now, { inputTokens: 120, outputTokens: 40, inputCost: 0.012, outputCost: 0.008, latencyMs: 800 }),
      llmCall(ws, botId, now, { inputTokens: 60, outputTokens: 90, inputCost: 0.006, outputCost: 0.018, latencyMs: 1500, ttftMs: 90, conversationId: 'c1', userId: 'u1' }),
      llmCall(ws, botId, now, { inputTokens: 30, outputTokens: 0, inputCost: 0, outputCost: 0, latencyMs: 4000, error: 'The provider did not answer in time' }),
    ]
    const yesterday = llmCall(ws, botId, now - DAY, { inputTokens: 5, outputTokens: 7, latencyMs: 700 })
    for (const call of [...today, yesterday]) h.app.services.llmUsage.record(call)

    const client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: ws })
    const { records } = await client.getBotAnalytics({ id: botId, startDate: isoDay(now - 2 * DAY), endDate: isoDay(now) })
    expect(records).toHaveLength(3)
    const [before, prior, day] = records as [typeof records[0], typeof records[0], typeof records[0]]
    expect(before.llm).toEqual({ calls: 0, errors: 0, inputTokens: 0, outputTokens: 0, latency: stats([]), tokensPerSecond: stats([]), cost: { sum: 0, ...stats([]) } })
    expect(prior.llm).toMatchObject({ calls: 1, errors: 0, inputTokens: 5, outputTokens: 7, latency: { mean: 700, min: 700, max: 700, sd: 0 } })
    expect(day.llm).toMatchObject({ calls: 3, errors: 1, inputTokens: 210, outputTokens: 130 })
    const ok = today.filter((c) => c.error === undefined)
    expectClose(day.llm.latency, stats(ok.map((c) => c.latencyMs)))
    expectClose(day.llm.tokensPerSecond, stats(ok.map((c) => (c.outputTokens * 1000) / c.latencyMs)))
    const costs = today.map((c) => c.inputCost + c.outputCost)
    expectClose(day.llm.cost, { sum: costs.reduce((s, x) => s + x, 0), ...stats(costs) })
    expect(Object.keys(day.llm).sort()).toEqual(['calls', 'cost', 'errors', 'inputTokens', 'latency', 'outputTokens', 'tokensPerSecond'])
  })

  it('a bot\'s token budget (setting, then its override) refuses 413 LimitExceeded once spent, naming the budget and the reset', async () => {
    const botId = await newBot('tokens')
    // The setting's 1000 tokens: 999 spent lets one more call in, 1000 does not.
    h.app.services.llmUsage.record(llmCall(ws, botId, Date.now(), { inputTokens: 900, outputTokens: 99, inputCost: 0, outputCost: 0 }))
    await h.app.services.llmUsage.admit(caller(botId))
    h.app.services.llmUsage.record(llmCall(ws, botId, Date.now(), { inputTokens: 1, outputTokens: 0, inputCost: 0, outputCost: 0 }))
    const err = await refusal(h.app.services.llmUsage.admit(caller(botId)))
    expect(err).toMatchObject({ type: 'LimitExceeded', status: 413, metadata: { scope: 'bot', budget: 'tokens', limit: 1000, spent: 1000, resetsAt: nextMidnight() } })
    expect(err.message).toContain(`bot "${botId}"`)
    expect(err.message).toContain('1000 tokens used today of 1000 tokens')
    expect(err.message).toContain(nextMidnight())

    const got = await admin('GET', `/bots/${botId}/llm-budget`)
    expect(got.status).toBe(200)
    expect(got.body.budget).toEqual({
      dailyTokens: null, dailyCost: null, effective: { dailyTokens: 1000, dailyCost: 0 },
      today: { calls: 2, tokens: 1000, cost: 0 }, resetsAt: nextMidnight(),
    })
    // Raised for this bot: the call goes through; then 0 = unlimited; then back to the setting with null.
    const raised = await admin('PUT', `/bots/${botId}/llm-budget`, { body: { dailyTokens: 5000 } })
    expect(raised.status, raised.text).toBe(200)
    expect(raised.body.budget).toMatchObject({ dailyTokens: 5000, dailyCost: null, effective: { dailyTokens: 5000, dailyCost: 0 } })
    await h.app.services.llmUsage.admit(caller(botId))
    expect((await admin('PUT', `/bots/${botId}/llm-budget`, { body: { dailyTokens: 0 } })).body.budget.effective.dailyTokens).toBe(0)
    await h.app.services.llmUsage.admit(caller(botId))
    expect((await admin('PUT', `/bots/${botId}/llm-budget`, { body: { dailyTokens: null } })).body.budget.effective.dailyTokens).toBe(1000)
    await refusal(h.app.services.llmUsage.admit(caller(botId)))
  })

  it('yesterday\'s calls do not count today (the budget resets at midnight UTC)', async () => {
    const botId = await newBot('yesterday')
    h.app.services.llmUsage.record(llmCall(ws, botId, Date.now() - DAY, { inputTokens: 50_000, inputCost: 0, outputCost: 0 }))
    await h.app.services.llmUsage.admit(caller(botId))
    expect((await admin('GET', `/bots/${botId}/llm-budget`)).body.budget.today).toEqual({ calls: 0, tokens: 0, cost: 0 })
  })

  it('a bot\'s cost budget, and the workspace\'s (all its bots together): the message says which', async () => {
    const spender = await newBot('spender')
    const quiet = await newBot('quiet')
    const set = await admin('PUT', `/bots/${spender}/llm-budget`, { body: { dailyCost: 0.05, dailyTokens: 0 } })
    expect(set.body.budget.effective).toEqual({ dailyTokens: 0, dailyCost: 0.05 })
    h.app.services.llmUsage.record(llmCall(ws, spender, Date.now(), { inputTokens: 1, outputTokens: 1, inputCost: 0.03, outputCost: 0.02 }))
    const bot = await refusal(h.app.services.llmUsage.admit(caller(spender)))
    expect(bot.metadata).toMatchObject({ scope: 'bot', budget: 'cost', limit: 0.05 })
    expect(bot.message).toContain('cost budget is spent: $0.0500 used today of $0.0500')
    // The other bot has its own budget left, until the workspace's day is spent.
    await h.app.services.llmUsage.admit(caller(quiet))
    const before = (await admin('GET', `/workspaces/${ws}/llm-budget`)).body.budget
    expect(before).toMatchObject({ dailyTokens: null, dailyCost: null, effective: { dailyTokens: 0, dailyCost: 1 }, resetsAt: nextMidnight() })
    const lowered = await admin('PUT', `/workspaces/${ws}/llm-budget`, { body: { dailyCost: before.today.cost } })
    expect(lowered.status, lowered.text).toBe(200)
    const workspace = await refusal(h.app.services.llmUsage.admit(caller(quiet)))
    expect(workspace.metadata).toMatchObject({ scope: 'workspace', budget: 'cost' })
    expect(workspace.message).toContain(`workspace "${ws}"`)
    // Back to unlimited for the other tests.
    expect((await admin('PUT', `/workspaces/${ws}/llm-budget`, { body: { dailyCost: 0 } })).body.budget.effective.dailyCost).toBe(0)
    await h.app.services.llmUsage.admit(caller(quiet))
  })

  it('calls admitted together overshoot by at most what they use; the next one is refused (the documented bound)', async () => {
    const botId = await newBot('concurrent')
    await admin('PUT', `/bots/${botId}/llm-budget`, { body: { dailyTokens: 250 } })
    const attempts = 5
    const outcomes = await Promise.allSettled(Array.from({ length: attempts }, async () => {
      await h.app.services.llmUsage.admit(caller(botId))
      h.app.services.llmUsage.record(llmCall(ws, botId, Date.now(), { inputTokens: 100, outputTokens: 0 }))
    }))
    const admitted = outcomes.filter((o) => o.status === 'fulfilled').length
    // At least the budget's worth went through; whatever went beyond it was admitted before the budget was reached.
    expect(admitted).toBeGreaterThanOrEqual(3)
    const { today } = (await admin('GET', `/bots/${botId}/llm-budget`)).body.budget
    expect(today).toMatchObject({ calls: admitted, tokens: admitted * 100 })
    await refusal(h.app.services.llmUsage.admit(caller(botId)))
  })

  it('record never throws: a call that cannot be stored is logged and counted; the series by provider and model', async () => {
    const botId = await newBot('metrics')
    const lost = llmCall('no-such-workspace', botId, Date.now())
    const usage = h.app.services.llmUsage
    // record does not hold the answer: it returns at once, and the write's failure is logged once it settled
    expect(() => usage.record(lost)).not.toThrow()
    await usage.settled()
    const warned = logText.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; callId?: string; botId?: string })
      .filter((l) => l.msg.includes('could not be recorded'))
    expect(warned).toMatchObject([{ callId: lost.id, botId }])
    const counted = llmCall(ws, botId, Date.now(), { provider: 'metrics-provider', model: 'mx', inputTokens: 11, outputTokens: 22, inputCost: 0.25, outputCost: 0.5 })
    usage.record(counted)
    usage.record(counted) // the same call again: counted once
    usage.record(llmCall(ws, botId, Date.now(), { provider: 'metrics-provider', model: 'mx', inputTokens: 3, outputTokens: 0, inputCost: 0, outputCost: 0, error: 'failed' }))
    await usage.settled()
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1])
    expect(value('parley_llm_record_failures_total')).toBe(1)
    expect(value('parley_llm_tokens_total{provider="metrics-provider",model="mx",direction="input"}')).toBe(14)
    expect(value('parley_llm_tokens_total{provider="metrics-provider",model="mx",direction="output"}')).toBe(22)
    expect(value('parley_llm_cost_usd_total{provider="metrics-provider",model="mx"}')).toBe(0.75)
    expect(value('parley_llm_calls_total{provider="metrics-provider",model="mx",outcome="ok"}')).toBe(1)
    expect(value('parley_llm_calls_total{provider="metrics-provider",model="mx",outcome="error"}')).toBe(1)
    expect(text).toMatch(/^# TYPE parley_llm_budget_refusals_total counter$/m)
  })

  it('bad budget bodies are 400 InvalidPayload; another workspace\'s bot or workspace id is a 404', async () => {
    const botId = await newBot('bad input')
    for (const body of [{ dailyTokens: -1 }, { dailyTokens: 1.5 }, { dailyTokens: 'many' }, { dailyCost: -0.01 }, { dailyCost: 'free' }, { dailyTokens: 1e16 }, { limit: 5 }]) {
      expectError(await admin('PUT', `/bots/${botId}/llm-budget`, { body }), 400, 'InvalidPayload')
      expectError(await admin('PUT', `/workspaces/${ws}/llm-budget`, { body }), 400, 'InvalidPayload')
    }
    expectError(await admin('PUT', `/bots/${botId}/llm-budget`, { raw: '{"dailyTokens":' }), 400, 'InvalidPayload')
    expect((await admin('GET', `/bots/${botId}/llm-budget`)).body.budget).toMatchObject({ dailyTokens: null, dailyCost: null })
    expectError(await admin('GET', '/bots/no-such-bot/llm-budget'), 404, 'ResourceNotFound')
    expectError(await admin('PUT', '/bots/no-such-bot/llm-budget', { body: { dailyTokens: 1 } }), 404, 'ResourceNotFound')
    const other = (await admin('POST', '/workspaces', { body: { name: 'other' }, workspaceId: null })).body.id as string
    expectError(await admin('GET', `/workspaces/${other}/llm-budget`), 404, 'ResourceNotFound')
    expectError(await admin('PUT', `/workspaces/${other}/llm-budget`, { body: { dailyTokens: 1 } }), 404, 'ResourceNotFound')
    const otherBot = (await admin('POST', '/bots', { body: { name: 'theirs' }, workspaceId: other })).body.bot.id as string
    expectError(await admin('GET', `/bots/${otherBot}/llm-budget`), 404, 'ResourceNotFound')
  })
})
