import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import type { TableRecord } from '../../../store/table-store.js'
import { AnyObject, TableParams, rowView } from './common.js'

export default tablesOperation({
  id: 'findTableRows', api: 'tables', method: 'POST', path: '/:table/rows/find', permission: 'tables.read',
  summary: 'Find rows: mongo-like filter, search, group, select, order, limit/offset',
  params: TableParams,
  body: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 100' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    filter: Type.Optional(AnyObject), group: Type.Optional(AnyObject),
    search: Type.Optional(Type.String({ maxLength: 1000 })),
    select: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 30 })),
    orderBy: Type.Optional(Type.String({ maxLength: 64 })),
    orderDirection: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  }),
  response: Type.Object({
    rows: Type.Array(AnyObject, { description: 'Rows (id, createdAt, updatedAt, computed, similarity with a search, the columns); with group: one object per group (<column>Key, <column>Sum, …)' }),
    hasMore: Type.Boolean(), offset: Type.Integer(), limit: Type.Integer(), warnings: Type.Optional(Type.Array(Type.String())),
  }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.findRows(botId, params.table, body)
    const rows = r.grouped ? r.rows : (r.rows as TableRecord[]).map((row) => rowView(row, r.columns, r.select))
    return { rows, hasMore: r.hasMore, offset: r.offset, limit: r.limit, ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) }
  },
})
