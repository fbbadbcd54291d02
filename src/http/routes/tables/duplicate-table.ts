import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { TableOut, tableView } from './common.js'

export default tablesOperation({
  id: 'duplicateTable', api: 'tables', method: 'POST', path: '/:sourceTableId/duplicate', permission: 'tables.write',
  summary: 'Copy a table (schema, and rows unless schemaOnly)',
  params: Type.Object({ sourceTableId: Type.String({ minLength: 1, maxLength: 200 }) }),
  body: Type.Object({ tableName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), schemaOnly: Type.Optional(Type.Boolean()), factor: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })) }),
  response: Type.Object({ table: TableOut, rows: Type.Integer() }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.duplicateTable(botId, params.sourceTableId, body)
    return { table: tableView(r.table), rows: r.rows }
  },
})
