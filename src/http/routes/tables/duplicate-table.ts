import { Type } from 'typebox'
import type { App } from '../../types.js'
import { TableOut, tableView, tablesSchema } from './common.js'

export default function duplicateTable(app: App): void {
  app.post('/:sourceTableId/duplicate', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('duplicateTable', 'Copy a table (schema, and rows unless schemaOnly)', {
      params: Type.Object({ sourceTableId: Type.String({ minLength: 1, maxLength: 200 }) }),
      body: Type.Object({ tableName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), schemaOnly: Type.Optional(Type.Boolean()), factor: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })) }),
    }, { 200: Type.Object({ table: TableOut, rows: Type.Integer() }) }),
  }, async (request) => {
    const r = await app.services.tables.duplicateTable(request.tablesBot.id, request.params.sourceTableId, request.body)
    return { table: tableView(r.table), rows: r.rows }
  })
}
