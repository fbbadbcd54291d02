/**
 * What admitting an LLM call reads (counted, not timed; on a real SQLite store): with no limit in force, nothing once
 * the budgets are known (they are kept 5 s per bot and workspace); with one, today's spend, once per call. A budget
 * changed through this instance applies to the next call at once. Before, every call made three reads (its bot's and
 * workspace's budgets, and the spend), which the gateway's overhead bench showed (bench/RESULTS.md, llm-gateway).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LlmUsageService } from '../../src/domain/llm/llm-usage-service.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { Store } from '../../src/store/store.js'
import { llmCall } from '../helpers/llm-calls.js'
import { seed } from './store.contract.js'

describe('LlmUsageService.admit: what it reads', () => {
  let store: Store
  let dir: string
  let ws: string
  let botId: string
  const reads: string[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-llm-admit-'))
    store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
    const a = await seed(store, Date.now())
    ws = a.workspace.id
    botId = a.bot.id
    for (const method of ['getBudget', 'spent'] as const) {
      const real = store.llm[method].bind(store.llm) as (...args: unknown[]) => unknown
      ;(store.llm as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        reads.push(method)
        return real(...args)
      }
    }
  })
  afterAll(async () => {
    await store?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const service = (botDailyTokens = 0) => new LlmUsageService(store, { getBot: async (_ws: string, id: string) => ({ bot: { id } }) } as never, {
    bot: { dailyTokens: botDailyTokens, dailyCost: 0 }, workspace: { dailyTokens: 0, dailyCost: 0 },
  }, { warn: () => {} })

  it('no limit in force: the two budgets once, then nothing per call', async () => {
    const usage = service()
    reads.length = 0
    for (let i = 0; i < 5; i++) await usage.admit({ workspaceId: ws, botId })
    expect(reads).toEqual(['getBudget', 'getBudget'])
  })

  it('a limit in force: today\'s spend once per call; a budget changed here applies to the next call', async () => {
    const usage = service(1_000_000)
    reads.length = 0
    for (let i = 0; i < 3; i++) await usage.admit({ workspaceId: ws, botId })
    expect(reads).toEqual(['getBudget', 'getBudget', 'spent', 'spent', 'spent'])
    usage.record(llmCall(ws, botId, Date.now(), { inputTokens: 10, outputTokens: 5 }))
    await usage.updateWorkspaceBudget(ws, ws, { dailyTokens: 10 })
    await expect(usage.admit({ workspaceId: ws, botId })).rejects.toMatchObject({ type: 'LimitExceeded' })
  })

  it('a call recorded but not yet stored counts: admit (with a limit in force) and the budget view wait for its write', async () => {
    // A fresh workspace and bot: the case above left a workspace budget behind.
    const fresh = await seed(store, Date.now())
    const caller = { workspaceId: fresh.workspace.id, botId: fresh.bot.id }
    const usage = service(10)
    const real = store.llm.recordCall.bind(store.llm)
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    store.llm.recordCall = async (row) => {
      await gate
      return real(row)
    }
    try {
      usage.record(llmCall(caller.workspaceId, caller.botId, Date.now(), { inputTokens: 10, outputTokens: 5 }))
      let done = false
      const admitted = usage.admit(caller).finally(() => (done = true))
      const viewed = usage.getBotBudget(caller.workspaceId, caller.botId)
      await new Promise((resolve) => setTimeout(resolve, 50))
      // Without the wait, admit would have read a spend of 0 (< 10) and let the call through by now.
      expect(done).toBe(false)
      open()
      await expect(admitted).rejects.toMatchObject({ type: 'LimitExceeded' })
      expect((await viewed).today.tokens).toBe(15)
    } finally {
      store.llm.recordCall = real
    }
  })
})
