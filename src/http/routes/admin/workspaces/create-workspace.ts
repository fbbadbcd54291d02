import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { workspaceView } from '../../../../domain/admin-views.js'
import { WorkspaceSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), billingVersion: Type.Optional(Type.String()) }, { additionalProperties: false })

export default function createWorkspace(app: App): void {
  app.post('/workspaces', {
    schema: adminSchema('createWorkspace', 'Create a workspace; the caller becomes its owner', { body: Body }, { 201: WorkspaceSchema }, { workspaceScoped: false }),
  }, async (request, reply) => reply.code(201).send(workspaceView(await app.services.workspaces.createWorkspace(request.account, request.body.name))))
}
