import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { workflowView } from '../../../domain/runtime-workflow-service.js'
import { runtimeSchema } from './common.js'
import { NewWorkflowFields, WorkflowResponse } from './workflows-common.js'

export default function createWorkflow(app: App): void {
  app.post('/workflows', {
    config: { permission: 'runtime.write', installation: { body: { conversationId: 'conversation', userId: 'user', parentWorkflowId: 'workflow', eventId: 'event' } } },
    schema: runtimeSchema('createWorkflow', 'Stores a workflow (data only: Parley runs no workflow engine; see the README)',
      { body: Type.Object(NewWorkflowFields) }, { 200: WorkflowResponse }),
  }, async (request, reply) => {
    const workflow = await app.services.runtimeWorkflows.create(request.runtimeBot, { ...request.body, input: request.body.input as JsonObject | undefined })
    return reply.send({ workflow: workflowView(workflow) })
  })
}
