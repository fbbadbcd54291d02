import { tablesOperation } from '../../operations/operation.js'
import { RowsWrite, rowsWritten } from './create-table-rows.js'

export default tablesOperation({
  id: 'updateTableRows', api: 'tables', method: 'PUT', path: '/:table/rows', permission: 'tables.write',
  summary: 'Update rows by id (the given columns change, null clears one); problems per row in errors',
  ...RowsWrite,
  run: async ({ botId, tables }, { params, body }) =>
    rowsWritten(tables, botId, params.table, await tables.updateRows(botId, params.table, body.rows as Record<string, unknown>[])),
})
