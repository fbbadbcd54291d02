import { Type } from 'typebox'
import type { App } from '../../types.js'
import { TableOut, TableParams, tableView, tablesSchema } from './common.js'

export default function getTable(app: App): void {
  app.get('/:table', {
    config: { permission: 'tables.read' },
    schema: tablesSchema('getTable', 'Get a table by id or name, with its row count', { params: TableParams },
      { 200: Type.Object({ table: TableOut, rows: Type.Integer(), stale: Type.Integer(), indexing: Type.Integer() }) }),
  }, async (request) => {
    const { table, rows } = await app.services.tables.getTable(request.tablesBot.id, request.params.table)
    return { table: tableView(table), rows, stale: 0, indexing: 0 }
  })
}
