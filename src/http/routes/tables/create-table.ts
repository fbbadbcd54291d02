import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { AnyObject, TableFields, TableOut, tableView } from './common.js'

export default tablesOperation({
  id: 'createTable', api: 'tables', method: 'POST', path: '/', permission: 'tables.write',
  summary: 'Create a table (409 when the bot has one of that name)',
  body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), schema: AnyObject, ...TableFields }),
  response: Type.Object({ table: TableOut }),
  run: async ({ botId, tables }, { body }) => ({ table: tableView(await tables.createTable(botId, body)) }),
})
