import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { workspaceView } from '../../../../domain/admin-views.js'
import { WorkspaceSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  handle: Type.Optional(Type.String({ maxLength: 200, description: 'Claims the workspace handle (3 to 64 characters: a-z, 0-9, - and _, starting and ending with a letter or digit); set once' })),
}, { additionalProperties: true })

export default function updateWorkspace(app: App): void {
  app.put('/workspaces/:id', {
    schema: adminSchema('updateWorkspace', 'Rename a workspace or claim its handle (administrator or owner)', { params: Type.Object({ id: Type.String() }), body: Body },
      { 200: WorkspaceSchema }, { workspaceScoped: false }),
  }, async (request) => workspaceView(await app.services.workspaces.updateWorkspace(request.account, request.params.id, request.body)))
}
