import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { TableOut, Tags, tableView } from './common.js'

export default tablesOperation({
  id: 'listTables', api: 'tables', method: 'GET', path: '/', permission: 'tables.read',
  summary: 'List the bot\'s tables (optionally those with all the given tags)',
  query: Type.Object({ tags: Type.Optional(Tags) }),
  response: Type.Object({ tables: Type.Array(TableOut) }),
  run: async ({ botId, tables }, { query }) => ({ tables: (await tables.listTables(botId, query.tags)).map(tableView) }),
})
