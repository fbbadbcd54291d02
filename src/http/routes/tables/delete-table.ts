import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { TableParams } from './common.js'

export default tablesOperation({
  id: 'deleteTable', api: 'tables', method: 'DELETE', path: '/:table', permission: 'tables.write',
  summary: 'Delete a table, its rows and jobs',
  params: TableParams,
  response: Type.Object({}),
  run: async ({ botId, tables }, { params }) => {
    await tables.deleteTable(botId, params.table)
    return {}
  },
})
