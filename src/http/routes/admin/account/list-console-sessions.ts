import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { IsoDate } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

const SessionSchema = Type.Object({
  id: Type.String({ description: 'The session\'s public id (revokeConsoleSession); never its secret' }),
  createdAt: IsoDate,
  expiresAt: IsoDate,
  personalAccessTokenId: Type.Union([Type.String(), Type.Null()], { description: 'The token it was signed in with (directly or through a sign-in link minted with it): the session ends when that token is deleted' }),
  current: Type.Boolean({ description: 'The console session of this request' }),
}, { additionalProperties: false })

export default function listConsoleSessions(app: App): void {
  app.get('/account/console-sessions', {
    schema: adminSchema('listConsoleSessions', 'The calling account\'s live console sessions, newest first', {},
      { 200: Type.Object({ sessions: Type.Array(SessionSchema) }) }, { workspaceScoped: false }),
  }, async (request) => {
    const current = request.principal.kind === 'account' ? request.principal.session?.id : undefined
    return { sessions: await app.services.console.listSessions(request.account.id, current) }
  })
}
