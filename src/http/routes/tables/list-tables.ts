import { Type } from 'typebox'
import type { App } from '../../types.js'
import { TableOut, Tags, tableView, tablesSchema } from './common.js'

export default function listTables(app: App): void {
  app.get('/', {
    config: { permission: 'tables.read' },
    schema: tablesSchema('listTables', 'List the bot\'s tables (optionally those with all the given tags)', { querystring: Type.Object({ tags: Type.Optional(Tags) }) }, { 200: Type.Object({ tables: Type.Array(TableOut) }) }),
  }, async (request) => ({ tables: (await app.services.tables.listTables(request.tablesBot.id, request.query.tags)).map(tableView) }))
}
