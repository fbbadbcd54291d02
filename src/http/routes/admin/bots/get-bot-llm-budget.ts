import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { LlmBudgetSchema } from '../llm-budget-schemas.js'

export default function getBotLlmBudget(app: App): void {
  app.get('/bots/:id/llm-budget', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getBotLlmBudget', 'The bot\'s daily LLM budget (Parley): its override, the limits in force (override or setting; 0 = unlimited), what it spent today (UTC) and when that resets',
      { params: Type.Object({ id: Type.String() }) }, { 200: LlmBudgetSchema }),
  }, async (request) => ({ budget: await app.services.llmUsage.getBotBudget(request.workspace.id, request.params.id) }))
}
