import { Type } from 'typebox'
import type { App } from '../../types.js'
import { RowOut, RowsIn, TableParams, rowView, tablesSchema } from './common.js'

export default function upsertTableRows(app: App): void {
  app.post('/:table/rows/upsert', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('upsertTableRows', 'Insert or update rows by the key column (or id); problems per row in errors', {
      params: TableParams, body: Type.Object({ rows: RowsIn, keyColumn: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), waitComputed: Type.Optional(Type.Boolean()) }),
    }, {
      200: Type.Object({
        inserted: Type.Array(RowOut), updated: Type.Array(RowOut),
        errors: Type.Optional(Type.Array(Type.String())), warnings: Type.Optional(Type.Array(Type.String())),
      }),
    }),
  }, async (request) => {
    const { tables } = app.services
    const r = await tables.upsertRows(request.tablesBot.id, request.params.table, request.body.rows as Record<string, unknown>[], request.body.keyColumn)
    const columns = await tables.columns(request.tablesBot.id, request.params.table)
    return {
      inserted: r.inserted.map((row) => rowView(row, columns)), updated: r.updated.map((row) => rowView(row, columns)),
      ...(r.errors.length > 0 ? { errors: r.errors } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}),
    }
  })
}
