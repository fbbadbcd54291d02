/**
 * Contract of LlmStore (src/store/llm-store.ts), run against each engine: a call recorded twice counts once; each
 * bot's and its workspace's spend per UTC day adds up the calls of that day only (another bot's calls count for the
 * workspace, another workspace's never); budgets are stored per bot and per workspace (a limit left unset stays
 * unset) and go with their bot or workspace; botDays' statistics equal those computed here over the same calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LlmCallRow } from '../../src/store/llm-store.js'
import type { Store } from '../../src/store/store.js'
import { seed } from './store.contract.js'
import { expectClose, llmCall, stats } from '../helpers/llm-calls.js'

export type LlmStoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>

const DAY = 86_400_000
const FIRST_DAY = Math.floor(Date.UTC(2026, 5, 10) / DAY)
const at = (day: number, hours: number) => (FIRST_DAY + day) * DAY + hours * 3_600_000

export function describeLlmContract(name: string, factory: LlmStoreFactory): void {
  describe(`LlmStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let ws: string, botId: string, sibling: string, otherWs: string, otherBot: string
    const day0: LlmCallRow[] = []

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      const a = await seed(store, at(-5, 0))
      ws = a.workspace.id
      botId = a.bot.id
      const b = await seed(store, at(-5, 0))
      otherWs = b.workspace.id
      otherBot = b.bot.id
      // A second bot of the first workspace.
      sibling = `${botId}-sibling`
      await store.createBot({ ...a.bot, id: sibling, name: 'sibling' }, [])
      day0.push(
        llmCall(ws, botId, at(0, 1), { inputTokens: 100, outputTokens: 50, inputCost: 0.01, outputCost: 0.02, latencyMs: 1000 }),
        llmCall(ws, botId, at(0, 2), { inputTokens: 200, outputTokens: 30, inputCost: 0.03, outputCost: 0.01, latencyMs: 300, ttftMs: 40, stopReason: 'max_tokens' }),
        llmCall(ws, botId, at(0, 23.9), { inputTokens: 7, outputTokens: 0, inputCost: 0, outputCost: 0, latencyMs: 2000, error: 'The provider answered 500' }),
      )
      for (const call of day0) expect(await store.llm.recordCall(call)).toBe(true)
      expect(await store.llm.recordCall(day0[0]!)).toBe(false) // the same id again: ignored
      await store.llm.recordCall(llmCall(ws, botId, at(1, 0), { inputTokens: 1000 })) // the next day
      await store.llm.recordCall(llmCall(ws, sibling, at(0, 5), { inputTokens: 40, outputTokens: 2, inputCost: 0.5, outputCost: 0 }))
      await store.llm.recordCall(llmCall(otherWs, otherBot, at(0, 5), { inputTokens: 9999 }))
    }, 60_000)
    afterAll(async () => cleanup?.())

    it('spent: the bot\'s day, and its workspace\'s day (all its bots), each call once', async () => {
      const { bot, workspace } = await store.llm.spent(ws, botId, FIRST_DAY)
      expect(bot).toEqual({ calls: 3, tokens: 150 + 230 + 7, cost: expect.closeTo(0.07, 9) })
      expect(workspace).toEqual({ calls: 4, tokens: 150 + 230 + 7 + 42, cost: expect.closeTo(0.57, 9) })
      expect((await store.llm.spent(ws, botId, FIRST_DAY + 1)).bot).toEqual({ calls: 1, tokens: 1005, cost: expect.closeTo(0.003, 9) })
      expect(await store.llm.spent(ws, botId, FIRST_DAY - 1)).toEqual({ bot: { calls: 0, tokens: 0, cost: 0 }, workspace: { calls: 0, tokens: 0, cost: 0 } })
      expect((await store.llm.spent(otherWs, otherBot, FIRST_DAY)).workspace.tokens).toBe(9999 + 5)
    })

    it('recentCalls: the bot\'s last calls, oldest first, as recorded (its own only)', async () => {
      const all = await store.llm.recentCalls(botId, 10)
      expect(all.map((c) => c.createdAt)).toEqual([at(0, 1), at(0, 2), at(0, 23.9), at(1, 0)])
      expect(all[2]).toMatchObject({ error: 'The provider answered 500', inputTokens: 7, latencyMs: 2000, workspaceId: ws, botId })
      expect(all[1]).toMatchObject({ ttftMs: 40, stopReason: 'max_tokens' })
      expect(all[0]!.ttftMs).toBeUndefined()
      expect((await store.llm.recentCalls(botId, 2)).map((c) => c.createdAt)).toEqual([at(0, 23.9), at(1, 0)])
      expect((await store.llm.recentCalls(sibling, 10)).map((c) => c.inputTokens)).toEqual([40])
    })

    it('conversationCalls: one conversation\'s last calls, oldest first (the bot\'s own only)', async () => {
      const fresh = await seed(store, at(-5, 0))
      const [w, b] = [fresh.workspace.id, fresh.bot.id]
      for (const [conversationId, hour, inputTokens] of [['c1', 1, 10], ['c2', 2, 20], ['c1', 3, 30], ['c1', 4, 40]] as const) {
        await store.llm.recordCall(llmCall(w, b, at(0, hour), { conversationId, inputTokens }))
      }
      const other = await seed(store, at(-5, 0))
      await store.llm.recordCall(llmCall(other.workspace.id, other.bot.id, at(0, 5), { conversationId: 'c1', inputTokens: 99 })) // another bot's c1
      expect((await store.llm.conversationCalls(b, 'c1', 10)).map((c) => c.inputTokens)).toEqual([10, 30, 40])
      expect((await store.llm.conversationCalls(b, 'c1', 2)).map((c) => c.inputTokens)).toEqual([30, 40])
      expect((await store.llm.conversationCalls(b, 'c2', 10)).map((c) => [c.conversationId, c.inputTokens])).toEqual([['c2', 20]])
      expect(await store.llm.conversationCalls(b, 'none', 10)).toEqual([])
    })

    it('botDays: per day, the statistics of the day\'s calls (latency and tokens/s over those without error)', async () => {
      const days = await store.llm.botDays(botId, FIRST_DAY - 1, FIRST_DAY + 2)
      expect(days.map((d) => d.day)).toEqual([FIRST_DAY, FIRST_DAY + 1])
      const d = days[0]!
      const ok = day0.filter((c) => c.error === undefined)
      const costs = day0.map((c) => c.inputCost + c.outputCost)
      expect(d).toMatchObject({ calls: 3, errors: 1, inputTokens: 307, outputTokens: 80 })
      expectClose(d.latency, stats(ok.map((c) => c.latencyMs)))
      expectClose(d.tokensPerSecond, stats(ok.map((c) => c.outputTokens * 1000 / c.latencyMs)))
      expectClose(d.cost, { sum: costs.reduce((s, x) => s + x, 0), ...stats(costs) })
      expect(d.latency).toMatchObject({ min: 300, max: 1000 })
      // The sibling's and the other workspace's calls are not this bot's.
      expect((await store.llm.botDays(sibling, FIRST_DAY, FIRST_DAY + 1))[0]).toMatchObject({ calls: 1, inputTokens: 40 })
      expect(await store.llm.botDays(botId, FIRST_DAY + 2, FIRST_DAY + 5)).toEqual([])
    })

    it('budgets: set, replaced, unset limits stay unset; per bot and per workspace apart', async () => {
      expect(await store.llm.getBudget('bot', botId)).toBeUndefined()
      await store.llm.setBudget('bot', botId, { dailyTokens: 1000, dailyCost: undefined, updatedAt: at(0, 1) })
      expect(await store.llm.getBudget('bot', botId)).toEqual({ dailyTokens: 1000, dailyCost: undefined, updatedAt: at(0, 1) })
      await store.llm.setBudget('bot', botId, { dailyTokens: undefined, dailyCost: 2.5, updatedAt: at(0, 2) })
      expect(await store.llm.getBudget('bot', botId)).toEqual({ dailyTokens: undefined, dailyCost: 2.5, updatedAt: at(0, 2) })
      expect(await store.llm.getBudget('workspace', ws)).toBeUndefined()
      await store.llm.setBudget('workspace', ws, { dailyTokens: 0, dailyCost: 0.25, updatedAt: at(0, 3) })
      expect(await store.llm.getBudget('workspace', ws)).toEqual({ dailyTokens: 0, dailyCost: 0.25, updatedAt: at(0, 3) })
      expect(await store.llm.getBudget('bot', sibling)).toBeUndefined()
    })

    it('a deleted bot\'s budget goes with it, its calls still count for the workspace; a deleted workspace takes everything', async () => {
      await store.llm.setBudget('bot', sibling, { dailyTokens: 5, dailyCost: undefined, updatedAt: at(0, 1) })
      expect(await store.deleteBot(sibling)).toBeDefined()
      expect(await store.llm.getBudget('bot', sibling)).toBeUndefined()
      expect((await store.llm.spent(ws, botId, FIRST_DAY)).workspace.calls).toBe(4)
      await store.llm.setBudget('workspace', otherWs, { dailyTokens: 5, dailyCost: undefined, updatedAt: at(0, 1) })
      expect(await store.deleteWorkspace(otherWs)).toBe(true)
      expect(await store.llm.getBudget('workspace', otherWs)).toBeUndefined()
      expect((await store.llm.spent(otherWs, otherBot, FIRST_DAY)).workspace.calls).toBe(0)
      expect(await store.llm.botDays(otherBot, FIRST_DAY, FIRST_DAY + 1)).toEqual([])
    })

    it('amounts that are not whole non-negative numbers count 0 (or are rounded); long texts are cut', async () => {
      const odd = await seed(store, at(-5, 0))
      const call = llmCall(odd.workspace.id, odd.bot.id, at(0, 1), {
        inputTokens: Number.NaN, outputTokens: 2.6, inputCost: -1, outputCost: Number.POSITIVE_INFINITY, latencyMs: -5, model: 'm'.repeat(500), error: 'e'.repeat(500),
      })
      expect(await store.llm.recordCall(call)).toBe(true)
      expect((await store.llm.spent(odd.workspace.id, odd.bot.id, FIRST_DAY)).bot).toEqual({ calls: 1, tokens: 3, cost: 0 })
      expect((await store.llm.botDays(odd.bot.id, FIRST_DAY, FIRST_DAY + 1))[0]).toMatchObject({ calls: 1, errors: 1, inputTokens: 0, outputTokens: 3 })
    })

    it('a call of an unknown workspace is refused (nothing stored)', async () => {
      await expect(store.llm.recordCall(llmCall('no-such-workspace', botId, at(0, 1)))).rejects.toThrow()
      expect((await store.llm.spent('no-such-workspace', botId, FIRST_DAY)).workspace.calls).toBe(0)
    })
  })
}
