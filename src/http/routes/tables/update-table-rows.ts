import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { RowOut, RowsIn, TableParams, rowView } from './common.js'

export default tablesOperation({
  id: 'updateTableRows', api: 'tables', method: 'PUT', path: '/:table/rows', permission: 'tables.write',
  summary: 'Update rows by id (the given columns change, null clears one); problems per row in errors',
  params: TableParams,
  body: Type.Object({ rows: RowsIn, waitComputed: Type.Optional(Type.Boolean()) }),
  response: Type.Object({ rows: Type.Array(RowOut), errors: Type.Optional(Type.Array(Type.String())), warnings: Type.Optional(Type.Array(Type.String())) }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.updateRows(botId, params.table, body.rows as Record<string, unknown>[])
    const columns = await tables.columns(botId, params.table)
    return { rows: r.rows.map((row) => rowView(row, columns)), ...(r.errors.length > 0 ? { errors: r.errors } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) }
  },
})
