import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { tokenView } from '../../../../domain/admin-views.js'
import { TokenSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function listPersonalAccessTokens(app: App): void {
  app.get('/account/pats', {
    schema: adminSchema('listPersonalAccessTokens', 'The account\'s tokens (values are never shown again)', {},
      { 200: Type.Object({ pats: Type.Array(TokenSchema) }) }, { workspaceScoped: false }),
  }, async (request) => ({ pats: (await app.services.workspaces.listAccessTokens(request.account.id)).map(tokenView) }))
}
