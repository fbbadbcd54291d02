import { Type } from 'typebox'
import type { App } from '../../types.js'
import { TableParams, tablesSchema } from './common.js'

export default function deleteTable(app: App): void {
  app.delete('/:table', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('deleteTable', 'Delete a table, its rows and jobs', { params: TableParams }, { 200: Type.Object({}) }),
  }, async (request) => {
    await app.services.tables.deleteTable(request.tablesBot.id, request.params.table)
    return {}
  })
}
