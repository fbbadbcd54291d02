import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { workflowView } from '../../../domain/runtime-workflow-service.js'
import { runtimeSchema } from './common.js'
import { WorkflowIdParams, WorkflowResponse, WorkflowUpdateBody } from './workflows-common.js'

export default function updateWorkflow(app: App): void {
  app.put('/workflows/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'workflow' }, body: { userId: 'user', eventId: 'event' } } },
    schema: runtimeSchema('updateWorkflow', 'Updates a workflow\'s status, output, timeout, tags (null removes one), user or event',
      { params: WorkflowIdParams, body: WorkflowUpdateBody }, { 200: WorkflowResponse }),
  }, async (request) => {
    const workflow = await app.services.runtimeWorkflows.update(request.runtimeBot, request.params.id, { ...request.body, output: request.body.output as JsonObject | undefined })
    return { workflow: workflowView(workflow) }
  })
}
