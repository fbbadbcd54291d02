import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { workflowView } from '../../../domain/runtime-workflow-service.js'
import { runtimeSchema } from './common.js'
import { NewWorkflowFields, WorkflowSchema } from './workflows-common.js'

export default function getOrCreateWorkflow(app: App): void {
  app.post('/workflows/get-or-create', {
    config: { permission: 'runtime.write', installation: { body: { conversationId: 'conversation', userId: 'user', parentWorkflowId: 'workflow', eventId: 'event' } } },
    schema: runtimeSchema('getOrCreateWorkflow', 'The newest workflow of that name (same conversation, user, parent; tags as discriminateByTags says; status group if given), or a new one',
      {
        body: Type.Object({
          ...NewWorkflowFields,
          discriminateByTags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
          discriminateByStatusGroup: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('finished')])),
        }),
      }, { 200: Type.Object({ workflow: WorkflowSchema, meta: Type.Object({ created: Type.Boolean() }) }) }),
  }, async (request) => {
    const { workflow, created } = await app.services.runtimeWorkflows.getOrCreate(request.runtimeBot, { ...request.body, input: request.body.input as JsonObject | undefined })
    return { workflow: workflowView(workflow), meta: { created } }
  })
}
