import type { LlmCallRecord, LlmCaller, LlmUsage } from './llm-usage.js'

/**
 * LlmUsage kept in memory only: it admits every call and keeps the latest calls and per-bot totals of this instance.
 * Composed until usage accounting (records, analytics, budgets: issue #28 part B) lands; tests read it too.
 */
export class MemoryLlmUsage implements LlmUsage {
  /** The latest calls, newest last (at most `keep`). */
  readonly calls: LlmCallRecord[] = []
  readonly totals = new Map<string, { calls: number; errors: number; inputTokens: number; outputTokens: number; cost: number }>()
  admitted = 0

  constructor(private readonly keep = 1000) {}

  async admit(_caller: LlmCaller): Promise<void> {
    this.admitted++
  }

  async record(call: LlmCallRecord): Promise<void> {
    this.calls.push(call)
    if (this.calls.length > this.keep) this.calls.shift()
    const t = this.totals.get(call.botId) ?? { calls: 0, errors: 0, inputTokens: 0, outputTokens: 0, cost: 0 }
    t.calls++
    if (call.error !== undefined) t.errors++
    t.inputTokens += call.inputTokens
    t.outputTokens += call.outputTokens
    t.cost += call.inputCost + call.outputCost
    this.totals.set(call.botId, t)
  }
}
