import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { LlmBudgetInputSchema, LlmBudgetSchema } from '../llm-budget-schemas.js'

export default function updateWorkspaceLlmBudget(app: App): void {
  app.put('/workspaces/:id/llm-budget', {
    config: { permission: 'workspace.update' },
    schema: adminSchema('updateWorkspaceLlmBudget', 'Set the workspace\'s daily LLM budget, all its bots together (Parley; administrator or owner): tokens and/or US dollars per UTC day, 0 = unlimited, null = the setting\'s default; a key left out keeps its value',
      { params: Type.Object({ id: Type.String() }), body: LlmBudgetInputSchema }, { 200: LlmBudgetSchema }),
  }, async (request) => ({ budget: await app.services.llmUsage.updateWorkspaceBudget(request.workspace.id, request.params.id, request.body) }))
}
