import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { workspaceView } from '../../../../domain/admin-views.js'
import { ADMIN_PAGE_SIZE } from '../../../../domain/workspace-service.js'
import { PageSizeQuery, WorkspaceSchema } from '../../../schemas/admin.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

const Query = Type.Object({ nextToken: Type.Optional(Type.String()), pageSize: PageSizeQuery, handle: Type.Optional(Type.String({ maxLength: 200, description: 'Only the workspace holding this handle' })) })

export default function listWorkspaces(app: App): void {
  app.get('/workspaces', {
    schema: adminSchema('listWorkspaces', 'Workspaces the calling account is a member of', { querystring: Query },
      { 200: Type.Object({ workspaces: Type.Array(WorkspaceSchema), meta: ListMeta }) }, { workspaceScoped: false }),
  }, async (request) => {
    const page = await app.services.workspaces.listWorkspaces(request.account, request.query.nextToken, request.query.pageSize ?? ADMIN_PAGE_SIZE.default, request.query.handle)
    return { workspaces: page.items.map(workspaceView), meta: listMeta(page) }
  })
}
