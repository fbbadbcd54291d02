import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botSummaryView } from '../../../../domain/admin-views.js'
import { ADMIN_PAGE_SIZE } from '../../../../domain/workspace-service.js'
import { BotSummarySchema, PageSizeQuery } from '../../../schemas/admin.js'
import { ListMeta, listMeta, StringMap } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'
import { can } from '../../../../domain/permissions.js'

const Query = Type.Object({
  dev: Type.Optional(Type.Boolean()),
  tags: Type.Optional(StringMap(Type.String(), { description: 'Dot notation: tags.env=prod' })),
  integrationNames: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
  pluginNames: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
  nextToken: Type.Optional(Type.String()),
  pageSize: PageSizeQuery,
  sortField: Type.Optional(Type.Union([Type.Literal('createdAt'), Type.Literal('updatedAt')])),
  sortDirection: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
})

export default function listBots(app: App): void {
  app.get('/bots', {
    config: { permission: 'bots.list' },
    schema: adminSchema('listBots', 'Bots of the x-workspace-id workspace, with keyset paging (an agent, who may list but not read bots, gets no `url`)', { querystring: Query },
      { 200: Type.Object({ bots: Type.Array(BotSummarySchema), meta: ListMeta }) }),
  }, async (request) => {
    const q = request.query
    const page = await app.services.bots.listBots(
      {
        workspaceId: request.workspace.id,
        dev: q.dev,
        tags: q.tags,
        integrationNames: q.integrationNames,
        sortField: q.sortField ?? 'createdAt',
        sortDirection: q.sortDirection ?? 'desc',
      },
      q.nextToken,
      q.pageSize ?? ADMIN_PAGE_SIZE.default,
    )
    // An agent picks a bot in the console by its name; where a bot receives its events is configuration.
    const full = can(request.role, 'bots.read')
    const view = (b: Parameters<typeof botSummaryView>[0]) => {
      const { url: _url, ...summary } = botSummaryView(b)
      return full ? botSummaryView(b) : summary
    }
    return { bots: page.items.map(view), meta: listMeta(page) }
  })
}
