import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function revokeConsoleSession(app: App): void {
  app.delete('/account/console-sessions/:id', {
    schema: adminSchema('revokeConsoleSession', 'End one of the calling account\'s console sessions (404 for another account\'s)',
      { params: Type.Object({ id: Type.String({ maxLength: 100 }) }), body: EmptyBody }, { 200: EmptyObject }, { workspaceScoped: false }),
  }, async (request) => {
    await app.services.console.revokeSession(request.account.id, request.params.id)
    return {}
  })
}
