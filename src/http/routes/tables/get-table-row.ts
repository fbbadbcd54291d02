import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { RowOut, TableParams, rowView } from './common.js'

export default tablesOperation({
  id: 'getTableRow', api: 'tables', method: 'GET', path: '/:table/row', permission: 'tables.read',
  summary: 'Get a row by id',
  params: TableParams,
  query: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
  response: Type.Object({ row: RowOut }),
  run: async ({ botId, tables }, { params, query }) => {
    const row = await tables.getRow(botId, params.table, query.id)
    return { row: rowView(row, await tables.columns(botId, params.table)) }
  },
})
