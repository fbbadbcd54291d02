import type { App } from '../../types.js'
import { EmptyBody, EmptyObject } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { WorkflowIdParams } from './workflows-common.js'

export default function deleteWorkflow(app: App): void {
  app.delete('/workflows/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'workflow' } } },
    schema: runtimeSchema('deleteWorkflow', 'Deletes a workflow', { params: WorkflowIdParams, body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.runtimeWorkflows.delete(request.runtimeBot, request.params.id)
    return {}
  })
}
