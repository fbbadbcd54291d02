import { Type } from 'typebox'

/** Bodies and answers of the LLM budget operations (bots/*-bot-llm-budget.ts, workspaces/*-workspace-llm-budget.ts; docs/llm-usage.md). */
export const LlmBudgetInputSchema = Type.Object({
  dailyTokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1e15 }), Type.Null()], { description: 'Tokens (input + output) per UTC day; 0 = unlimited; null: the setting\'s default' })),
  dailyCost: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1e9 }), Type.Null()], { description: 'US dollars per UTC day; 0 = unlimited; null: the setting\'s default' })),
}, { additionalProperties: false })

const Budget = Type.Object({ dailyTokens: Type.Number(), dailyCost: Type.Number() })

export const LlmBudgetSchema = Type.Object({
  budget: Type.Object({
    dailyTokens: Type.Union([Type.Number(), Type.Null()], { description: 'The override set here; null: the setting\'s default applies' }),
    dailyCost: Type.Union([Type.Number(), Type.Null()]),
    effective: Budget,
    today: Type.Object({ calls: Type.Number(), tokens: Type.Number(), cost: Type.Number() }),
    resetsAt: Type.String({ description: 'The next midnight UTC, when today\'s spend starts again from 0' }),
  }),
})
