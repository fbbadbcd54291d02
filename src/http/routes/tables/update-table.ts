import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { AnyObject, TableFields, TableOut, TableParams, tableView } from './common.js'

export default tablesOperation({
  id: 'updateTable', api: 'tables', method: 'PUT', path: '/:table', permission: 'tables.write',
  summary: 'Update a table (a schema that existing rows break is refused with the reason)',
  params: TableParams,
  body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), schema: Type.Optional(AnyObject), ...TableFields }),
  response: Type.Object({ table: TableOut, staleColumns: Type.Array(Type.String()) }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.updateTable(botId, params.table, body)
    return { table: tableView(r.table), staleColumns: r.staleColumns }
  },
})
