import { Type } from 'typebox'
import type { App } from '../../types.js'
import { TableOut, TableParams, tableView, tablesSchema } from './common.js'

export default function renameTableColumn(app: App): void {
  app.put('/:table/column', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('renameTableColumn', 'Rename a column (its values move with it)', {
      params: TableParams, body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), newName: Type.String({ minLength: 1, maxLength: 64 }) }),
    }, { 200: Type.Object({ table: TableOut }) }),
  }, async (request) => ({ table: tableView(await app.services.tables.renameColumn(request.tablesBot.id, request.params.table, request.body.name, request.body.newName)) }))
}
