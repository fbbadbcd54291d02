/**
 * The Tables API operations the security matrix (tables.security.test.ts) runs, one row each: how to
 * call it on a fixture (`TableIds`: a table with one row and a file to import), whether it writes,
 * and whether it names a resource (another bot's or workspace's table must give 404).
 */
import type { Harness } from '../helpers/harness.js'

export interface TableIds {
  botId: string
  tableId: string
  tableName: string
  rowId: number
  fileId: string
}

export interface TableOp {
  name: string
  write: boolean
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  url: (ids: TableIds) => string
  body?: (ids: TableIds) => unknown
  scoped: boolean
}

let seq = 0
const schema = { name: { type: 'string' }, n: { type: 'number' } }

export const TABLE_OPS: TableOp[] = [
  { name: 'listTables', write: false, method: 'GET', url: () => '/v1/tables', scoped: false },
  { name: 'getTable', write: false, method: 'GET', url: (i) => `/v1/tables/${i.tableId}`, scoped: true },
  { name: 'getOrCreateTable', write: true, method: 'POST', url: (i) => `/v1/tables/${i.tableName}`, body: () => ({ schema }), scoped: true },
  { name: 'createTable', write: true, method: 'POST', url: () => '/v1/tables', body: () => ({ name: `sec${Date.now().toString(36)}${++seq}Table`, schema }), scoped: false },
  { name: 'duplicateTable', write: true, method: 'POST', url: (i) => `/v1/tables/${i.tableId}/duplicate`, body: () => ({ tableName: `dup${Date.now().toString(36)}${++seq}Table` }), scoped: true },
  { name: 'exportTable', write: false, method: 'GET', url: (i) => `/v1/tables/${i.tableId}/export?format=csv`, scoped: true },
  { name: 'importTable', write: true, method: 'POST', url: (i) => `/v1/tables/${i.tableId}/import`, body: (i) => ({ fileId: i.fileId }), scoped: true },
  { name: 'getTableJobs', write: false, method: 'GET', url: (i) => `/v1/tables/${i.tableId}/jobs`, scoped: true },
  { name: 'updateTable', write: true, method: 'PUT', url: (i) => `/v1/tables/${i.tableId}`, body: () => ({ tags: { a: 'b' } }), scoped: true },
  { name: 'renameTableColumn', write: true, method: 'PUT', url: (i) => `/v1/tables/${i.tableId}/column`, body: () => ({ name: 'n', newName: 'm' }), scoped: true },
  { name: 'deleteTable', write: true, method: 'DELETE', url: (i) => `/v1/tables/${i.tableId}`, scoped: true },
  { name: 'getTableRow', write: false, method: 'GET', url: (i) => `/v1/tables/${i.tableId}/row?id=${i.rowId}`, scoped: true },
  { name: 'findTableRows', write: false, method: 'POST', url: (i) => `/v1/tables/${i.tableId}/rows/find`, body: () => ({ filter: { n: { $gte: 0 } } }), scoped: true },
  { name: 'createTableRows', write: true, method: 'POST', url: (i) => `/v1/tables/${i.tableId}/rows`, body: () => ({ rows: [{ name: 'x', n: 1 }] }), scoped: true },
  { name: 'updateTableRows', write: true, method: 'PUT', url: (i) => `/v1/tables/${i.tableId}/rows`, body: (i) => ({ rows: [{ id: i.rowId, n: 2 }] }), scoped: true },
  { name: 'upsertTableRows', write: true, method: 'POST', url: (i) => `/v1/tables/${i.tableId}/rows/upsert`, body: () => ({ rows: [{ name: 'k', n: 3 }] }), scoped: true },
  { name: 'deleteTableRows', write: true, method: 'POST', url: (i) => `/v1/tables/${i.tableId}/rows/delete`, body: (i) => ({ ids: [i.rowId] }), scoped: true },
]

/** A table (key column `name`) with one row, and a JSON file to import, for `botId`. */
export async function tableFixture(h: Harness, botId: string): Promise<TableIds> {
  const tables = h.app.services.tables
  const table = await tables.createTable(botId, { name: `fx${Date.now().toString(36)}${++seq}Table`, schema, keyColumn: 'name' })
  const { rows } = await tables.createRows(botId, table.id, [{ name: 'fixture', n: 1 }])
  const file = await h.app.services.files.writeFile(botId, { key: `fx-${seq}.json`, contentType: 'application/json' }, Buffer.from('[{"name":"imported","n":5}]'))
  return { botId, tableId: table.id, tableName: table.name, rowId: rows[0]!.id, fileId: file.id }
}
