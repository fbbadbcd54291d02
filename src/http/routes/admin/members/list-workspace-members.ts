import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { memberView } from '../../../../domain/admin-views.js'
import { ADMIN_PAGE_SIZE } from '../../../../domain/workspace-service.js'
import { MemberSchema, PageSizeQuery } from '../../../schemas/admin.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

const Query = Type.Object({ nextToken: Type.Optional(Type.String()), pageSize: PageSizeQuery })

export default function listWorkspaceMembers(app: App): void {
  app.get('/workspace-members', {
    config: { permission: 'members.read' },
    schema: adminSchema('listWorkspaceMembers', 'Members of the x-workspace-id workspace', { querystring: Query },
      { 200: Type.Object({ members: Type.Array(MemberSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.workspaces.listMembers(request.workspace.id, request.query.nextToken, request.query.pageSize ?? ADMIN_PAGE_SIZE.default)
    return { members: page.items.map(memberView), meta: listMeta(page) }
  })
}
