import { Type } from 'typebox'
import type { App } from '../../types.js'
import { RowOut, TableParams, rowView, tablesSchema } from './common.js'

export default function getTableRow(app: App): void {
  app.get('/:table/row', {
    config: { permission: 'tables.read' },
    schema: tablesSchema('getTableRow', 'Get a row by id', { params: TableParams, querystring: Type.Object({ id: Type.Integer({ minimum: 1 }) }) }, { 200: Type.Object({ row: RowOut }) }),
  }, async (request) => {
    const { tables } = app.services
    const row = await tables.getRow(request.tablesBot.id, request.params.table, request.query.id)
    return { row: rowView(row, await tables.columns(request.tablesBot.id, request.params.table)) }
  })
}
