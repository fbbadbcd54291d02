import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { LlmBudgetSchema } from '../llm-budget-schemas.js'

export default function getWorkspaceLlmBudget(app: App): void {
  app.get('/workspaces/:id/llm-budget', {
    config: { permission: 'workspace.read' },
    schema: adminSchema('getWorkspaceLlmBudget', 'The workspace\'s daily LLM budget, all its bots together (Parley): its override, the limits in force (0 = unlimited), what was spent today (UTC) and when that resets',
      { params: Type.Object({ id: Type.String() }) }, { 200: LlmBudgetSchema }),
  }, async (request) => ({ budget: await app.services.llmUsage.getWorkspaceBudget(request.workspace.id, request.params.id) }))
}
