import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { TableOut, TableParams, tableView } from './common.js'

export default tablesOperation({
  id: 'getTable', api: 'tables', method: 'GET', path: '/:table', permission: 'tables.read',
  summary: 'Get a table by id or name, with its row count',
  params: TableParams,
  response: Type.Object({ table: TableOut, rows: Type.Integer(), stale: Type.Integer(), indexing: Type.Integer() }),
  run: async ({ botId, tables }, { params }) => {
    const { table, rows } = await tables.getTable(botId, params.table)
    return { table: tableView(table), rows, stale: 0, indexing: 0 }
  },
})
