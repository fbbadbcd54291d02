import { Type } from 'typebox'
import type { App } from '../../types.js'
import { workflowView } from '../../../domain/runtime-workflow-service.js'
import { ListMeta, listMeta } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { WorkflowListQuery, WorkflowSchema } from './workflows-common.js'

export default function listWorkflows(app: App): void {
  app.get('/workflows', {
    config: { permission: 'runtime.read', installation: { query: { conversationId: 'conversation', userId: 'user', parentWorkflowId: 'workflow' } } },
    schema: runtimeSchema('listWorkflows', 'The bot\'s workflows, newest first, filtered by name, tags, conversation, user, parent and statuses',
      { querystring: WorkflowListQuery }, { 200: Type.Object({ workflows: Type.Array(WorkflowSchema), meta: ListMeta }) }),
  }, async (request) => {
    const { nextToken, pageSize, ...filter } = request.query
    const page = await app.services.runtimeWorkflows.list(request.runtimeBot, filter, nextToken, pageSize)
    return { workflows: page.items.map(workflowView), meta: listMeta(page) }
  })
}
