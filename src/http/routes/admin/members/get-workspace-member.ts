import type { App } from '../../../types.js'
import { memberView } from '../../../../domain/admin-views.js'
import { MemberSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function getWorkspaceMember(app: App): void {
  app.get('/workspace-members/me', {
    schema: adminSchema('getWorkspaceMember', 'The caller\'s own membership of the x-workspace-id workspace', {}, { 200: MemberSchema }),
  }, async (request) => memberView(await app.services.workspaces.getMember(request.workspace.id, request.account.id)))
}
