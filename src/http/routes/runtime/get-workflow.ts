import type { App } from '../../types.js'
import { workflowView } from '../../../domain/runtime-workflow-service.js'
import { runtimeSchema } from './common.js'
import { WorkflowIdParams, WorkflowResponse } from './workflows-common.js'

export default function getWorkflow(app: App): void {
  app.get('/workflows/:id', {
    config: { permission: 'runtime.read', installation: { params: { id: 'workflow' } } },
    schema: runtimeSchema('getWorkflow', 'A workflow of the bot', { params: WorkflowIdParams }, { 200: WorkflowResponse }),
  }, async (request) => ({ workflow: workflowView(await app.services.runtimeWorkflows.get(request.runtimeBot, request.params.id)) }))
}
