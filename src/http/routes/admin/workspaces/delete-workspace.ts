import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deleteWorkspace(app: App): void {
  app.delete('/workspaces/:id', {
    schema: adminSchema('deleteWorkspace', 'Delete a workspace with all its bots and their data (owner only)',
      { params: Type.Object({ id: Type.String() }), body: EmptyBody }, { 200: EmptyObject }, { workspaceScoped: false }),
  }, async (request) => {
    await app.services.workspaces.deleteWorkspace(request.account, request.params.id)
    return {}
  })
}
