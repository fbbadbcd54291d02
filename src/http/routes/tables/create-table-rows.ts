import { Type } from 'typebox'
import type { TablesService } from '../../../domain/tables-service.js'
import type { TableRecord } from '../../../store/table-store.js'
import { tablesOperation } from '../../operations/operation.js'
import { RowOut, RowsIn, TableParams, rowView } from './common.js'

/** The body and response of createTableRows and updateTableRows. */
export const RowsWrite = {
  params: TableParams,
  body: Type.Object({ rows: RowsIn, waitComputed: Type.Optional(Type.Boolean()) }),
  response: Type.Object({ rows: Type.Array(RowOut), errors: Type.Optional(Type.Array(Type.String())), warnings: Type.Optional(Type.Array(Type.String())) }),
}

/** The rows written (with the table's columns), and what was refused or warned about. */
export async function rowsWritten(tables: TablesService, botId: string, table: string, r: { rows: TableRecord[]; errors: string[]; warnings: string[] }) {
  const columns = await tables.columns(botId, table)
  return { rows: r.rows.map((row) => rowView(row, columns)), ...(r.errors.length > 0 ? { errors: r.errors } : {}), ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) }
}

export default tablesOperation({
  id: 'createTableRows', api: 'tables', method: 'POST', path: '/:table/rows', permission: 'tables.write',
  summary: 'Insert rows (at most 1000); a row that breaks the schema is skipped and reported in errors',
  ...RowsWrite,
  run: async ({ botId, tables }, { params, body }) =>
    rowsWritten(tables, botId, params.table, await tables.createRows(botId, params.table, body.rows as Record<string, unknown>[])),
})
