/**
 * LLM call records as the gateway hands them to LlmUsage.record (src/domain/llm/llm-usage.ts), for the usage tests:
 * no provider is involved (part B of issue #28 is tested on the records alone), and the statistics getBotAnalytics
 * reports, computed here the plain way.
 */
import { expect } from 'vitest'
import type { LlmCallRecord } from '../../src/domain/llm/llm-usage.js'

let seq = 0

/** A successful call of 10 + 5 tokens costing $0.003 in 500 ms, with `fields` over it. */
export function llmCall(workspaceId: string, botId: string, createdAt: number, fields: Partial<LlmCallRecord> = {}): LlmCallRecord {
  return {
    id: `call-${++seq}-${Math.random().toString(36).slice(2)}`, workspaceId, botId, provider: 'local', model: 'm1',
    inputTokens: 10, outputTokens: 5, inputCost: 0.001, outputCost: 0.002, latencyMs: 500, via: 'cognitive-v2', createdAt, ...fields,
  }
}

/** mean, population standard deviation, min and max, as getBotAnalytics().llm reports them (zeros for none). */
export function stats(xs: number[]): { mean: number; sd: number; min: number; max: number } {
  if (xs.length === 0) return { mean: 0, sd: 0, min: 0, max: 0 }
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length
  return { mean, sd: Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length), min: Math.min(...xs), max: Math.max(...xs) }
}

/** Each number of `expected` equals the one of `actual` to 9 decimals (sums of floating-point costs). */
export function expectClose(actual: object, expected: object): void {
  for (const [key, value] of Object.entries(expected)) expect((actual as Record<string, number>)[key], key).toBeCloseTo(value as number, 9)
}
