import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function revokeConsoleSessions(app: App): void {
  app.delete('/account/console-sessions', {
    schema: adminSchema('revokeConsoleSessions', 'Sign out everywhere: end every console session and unused sign-in link of the calling account (its personal access tokens stay valid)',
      { body: EmptyBody }, { 200: Type.Object({ revoked: Type.Integer({ description: 'How many sessions ended' }) }) }, { workspaceScoped: false }),
  }, async (request) => ({ revoked: await app.services.console.revokeAll(request.account.id) }))
}
