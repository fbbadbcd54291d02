import { Type } from 'typebox'
import type { App } from '../../types.js'
import { AnyObject, TableFields, TableOut, tableView, tablesSchema } from './common.js'

export default function createTable(app: App): void {
  app.post('/', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('createTable', 'Create a table (409 when the bot has one of that name)', {
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), schema: AnyObject, ...TableFields }),
    }, { 200: Type.Object({ table: TableOut }) }),
  }, async (request) => ({ table: tableView(await app.services.tables.createTable(request.tablesBot.id, request.body)) }))
}
