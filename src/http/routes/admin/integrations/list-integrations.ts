import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { ADMIN_PAGE_SIZE } from '../../../../domain/workspace-service.js'
import { PageSizeQuery } from '../../../schemas/admin.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

const Query = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
  pageSize: PageSizeQuery,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  version: Type.Optional(Type.String({ maxLength: 100 })),
  dev: Type.Optional(Type.Boolean()),
}, { additionalProperties: true })

const Summary = Type.Object({
  id: Type.String(), createdAt: Type.String(), updatedAt: Type.String(), name: Type.String(), version: Type.String(),
  title: Type.String(), description: Type.String(), iconUrl: Type.String(), public: Type.Boolean(), dev: Type.Boolean(),
  visibility: Type.String(), verificationStatus: Type.String(), lifecycleStatus: Type.String(),
})

export default function listIntegrations(app: App): void {
  app.get('/integrations', {
    config: { permission: 'bots.read' },
    schema: adminSchema('listIntegrations', 'The workspace\'s integration definitions (private: other workspaces\' are never listed)', { querystring: Query },
      { 200: Type.Object({ integrations: Type.Array(Summary), meta: ListMeta }) }),
  }, async (request) => {
    const q = request.query
    const page = await app.services.integrations.list(request.workspace.id, { name: q.name, version: q.version, dev: q.dev }, q.nextToken, q.pageSize ?? q.limit ?? ADMIN_PAGE_SIZE.default)
    return {
      integrations: page.items.map((d) => ({
        id: d.id, createdAt: new Date(d.createdAt).toISOString(), updatedAt: new Date(d.updatedAt).toISOString(), name: d.name, version: d.version,
        title: typeof d.definition.title === 'string' ? d.definition.title : d.name,
        description: typeof d.definition.description === 'string' ? d.definition.description : '',
        iconUrl: '', public: d.visibility === 'public', dev: d.dev, visibility: d.visibility ?? 'private', verificationStatus: 'unapproved', lifecycleStatus: 'published',
      })),
      meta: listMeta(page),
    }
  })
}
