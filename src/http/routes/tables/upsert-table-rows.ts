import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { RowOut, RowsIn, TableParams, rowView } from './common.js'

export default tablesOperation({
  id: 'upsertTableRows', api: 'tables', method: 'POST', path: '/:table/rows/upsert', permission: 'tables.write',
  summary: 'Insert or update rows by the key column (or id); problems per row in errors',
  params: TableParams,
  body: Type.Object({ rows: RowsIn, keyColumn: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), waitComputed: Type.Optional(Type.Boolean()) }),
  response: Type.Object({
    inserted: Type.Array(RowOut), updated: Type.Array(RowOut),
    errors: Type.Optional(Type.Array(Type.String())), warnings: Type.Optional(Type.Array(Type.String())),
  }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.upsertRows(botId, params.table, body.rows as Record<string, unknown>[], body.keyColumn)
    const columns = await tables.columns(botId, params.table)
    return {
      inserted: r.inserted.map((row) => rowView(row, columns)), updated: r.updated.map((row) => rowView(row, columns)),
      ...(r.errors.length > 0 ? { errors: r.errors } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}),
    }
  },
})
