import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { RowOut, RowsIn, TableParams, rowView } from './common.js'

export default tablesOperation({
  id: 'createTableRows', api: 'tables', method: 'POST', path: '/:table/rows', permission: 'tables.write',
  summary: 'Insert rows (at most 1000); a row that breaks the schema is skipped and reported in errors',
  params: TableParams,
  body: Type.Object({ rows: RowsIn, waitComputed: Type.Optional(Type.Boolean()) }),
  response: Type.Object({ rows: Type.Array(RowOut), errors: Type.Optional(Type.Array(Type.String())), warnings: Type.Optional(Type.Array(Type.String())) }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.createRows(botId, params.table, body.rows as Record<string, unknown>[])
    const columns = await tables.columns(botId, params.table)
    return { rows: r.rows.map((row) => rowView(row, columns)), ...(r.errors.length > 0 ? { errors: r.errors } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) }
  },
})
