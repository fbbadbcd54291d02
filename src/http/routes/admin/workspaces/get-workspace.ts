import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { workspaceView } from '../../../../domain/admin-views.js'
import { WorkspaceSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function getWorkspace(app: App): void {
  app.get('/workspaces/:id', {
    schema: adminSchema('getWorkspace', 'A workspace the caller is a member of', { params: Type.Object({ id: Type.String() }) }, { 200: WorkspaceSchema },
      { workspaceScoped: false }),
  }, async (request) => workspaceView(await app.services.workspaces.getWorkspace(request.account, request.params.id)))
}
