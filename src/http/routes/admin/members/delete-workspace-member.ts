import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deleteWorkspaceMember(app: App): void {
  app.delete('/workspace-members/:id', {
    schema: adminSchema('deleteWorkspaceMember', 'Remove a member (anyone may remove themselves; the last owner stays)',
      { params: Type.Object({ id: Type.String() }), body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.workspaces.removeMember(request.workspace.id, request.account, request.role, request.params.id)
    return {}
  })
}
