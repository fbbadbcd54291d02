import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deletePersonalAccessToken(app: App): void {
  app.delete('/account/pats/:id', {
    schema: adminSchema('deletePersonalAccessToken', 'Revoke one of the calling account\'s tokens',
      { params: Type.Object({ id: Type.String() }), body: EmptyBody }, { 200: EmptyObject }, { workspaceScoped: false }),
  }, async (request) => {
    await app.services.workspaces.revokeAccessToken(request.account.id, request.params.id)
    return {}
  })
}
