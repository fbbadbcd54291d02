import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { TableOut, TableParams, tableView } from './common.js'

export default tablesOperation({
  id: 'renameTableColumn', api: 'tables', method: 'PUT', path: '/:table/column', permission: 'tables.write',
  summary: 'Rename a column (its values move with it)',
  params: TableParams,
  body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), newName: Type.String({ minLength: 1, maxLength: 64 }) }),
  response: Type.Object({ table: TableOut }),
  run: async ({ botId, tables }, { params, body }) => ({ table: tableView(await tables.renameColumn(botId, params.table, body.name, body.newName)) }),
})
