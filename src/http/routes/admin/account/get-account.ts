import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { accountView } from '../../../../domain/admin-views.js'
import { AccountSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function getAccount(app: App): void {
  app.get('/account/me', {
    schema: adminSchema('getAccount', 'The account that owns the token', {}, { 200: Type.Object({ account: AccountSchema }) }, { workspaceScoped: false }),
  }, async (request) => ({ account: accountView(request.account) }))
}
