import { Type } from 'typebox'
import type { App } from '../../types.js'
import { AnyObject, TableFields, TableOut, TableParams, tableView, tablesSchema } from './common.js'

export default function updateTable(app: App): void {
  app.put('/:table', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('updateTable', 'Update a table (a schema that existing rows break is refused with the reason)', {
      params: TableParams, body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), schema: Type.Optional(AnyObject), ...TableFields }),
    }, { 200: Type.Object({ table: TableOut, staleColumns: Type.Array(Type.String()) }) }),
  }, async (request) => {
    const r = await app.services.tables.updateTable(request.tablesBot.id, request.params.table, request.body)
    return { table: tableView(r.table), staleColumns: r.staleColumns }
  })
}
