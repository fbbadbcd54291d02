import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { LlmBudgetInputSchema, LlmBudgetSchema } from '../llm-budget-schemas.js'

export default function updateBotLlmBudget(app: App): void {
  app.put('/bots/:id/llm-budget', {
    config: { permission: 'bots.write' },
    schema: adminSchema('updateBotLlmBudget', 'Set the bot\'s daily LLM budget (Parley): tokens and/or US dollars per UTC day, 0 = unlimited, null = the setting\'s default; a key left out keeps its value',
      { params: Type.Object({ id: Type.String() }), body: LlmBudgetInputSchema }, { 200: LlmBudgetSchema }),
  }, async (request) => ({ budget: await app.services.llmUsage.updateBotBudget(request.workspace.id, request.params.id, request.body) }))
}
