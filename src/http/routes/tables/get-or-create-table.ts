import { Type } from 'typebox'
import type { App } from '../../types.js'
import { AnyObject, TableFields, TableOut, TableParams, tableView, tablesSchema } from './common.js'

export default function getOrCreateTable(app: App): void {
  app.post('/:table', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('getOrCreateTable', 'The table of that name, created with this definition when missing', {
      params: TableParams, body: Type.Object({ schema: AnyObject, ...TableFields }),
    }, { 200: Type.Object({ table: TableOut, created: Type.Boolean(), rows: Type.Integer(), stale: Type.Integer(), indexing: Type.Integer() }) }),
  }, async (request) => {
    const r = await app.services.tables.getOrCreateTable(request.tablesBot.id, request.params.table, request.body)
    return { table: tableView(r.table), created: r.created, rows: r.rows, stale: 0, indexing: 0 }
  })
}
