import { Type } from 'typebox'
import type { App } from '../../types.js'
import { RowOut, RowsIn, TableParams, rowView, tablesSchema } from './common.js'

export default function createTableRows(app: App): void {
  app.post('/:table/rows', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('createTableRows', 'Insert rows (at most 1000); a row that breaks the schema is skipped and reported in errors', {
      params: TableParams, body: Type.Object({ rows: RowsIn, waitComputed: Type.Optional(Type.Boolean()) }),
    }, { 200: Type.Object({ rows: Type.Array(RowOut), errors: Type.Optional(Type.Array(Type.String())), warnings: Type.Optional(Type.Array(Type.String())) }) }),
  }, async (request) => {
    const { tables } = app.services
    const r = await tables.createRows(request.tablesBot.id, request.params.table, request.body.rows as Record<string, unknown>[])
    const columns = await tables.columns(request.tablesBot.id, request.params.table)
    return { rows: r.rows.map((row) => rowView(row, columns)), ...(r.errors.length > 0 ? { errors: r.errors } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) }
  })
}
