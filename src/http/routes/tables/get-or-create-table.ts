import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { AnyObject, TableFields, TableOut, TableParams, tableView } from './common.js'

export default tablesOperation({
  id: 'getOrCreateTable', api: 'tables', method: 'POST', path: '/:table', permission: 'tables.write',
  summary: 'The table of that name, created with this definition when missing',
  params: TableParams,
  body: Type.Object({ schema: AnyObject, ...TableFields }),
  response: Type.Object({ table: TableOut, created: Type.Boolean(), rows: Type.Integer(), stale: Type.Integer(), indexing: Type.Integer() }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.getOrCreateTable(botId, params.table, body)
    return { table: tableView(r.table), created: r.created, rows: r.rows, stale: 0, indexing: 0 }
  },
})
