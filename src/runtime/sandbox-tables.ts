/**
 * The table operations of the sandboxed bot's client (docs/bot-code.md, "Tables"): the 17 operations
 * of @botpress/client's `tables` part, with its names, arguments and result shapes, served by the
 * same TablesService as the Tables API routes, on the bot's own tables.
 */
import { errors } from '../lib/errors.js'
import type { TablesService } from '../domain/tables-service.js'
import { jobView, rowView, tableView } from '../domain/table-views.js'
import type { BotRow } from '../store/store.js'

type Args = Record<string, unknown>

export const TABLE_METHODS = [
  'listTables', 'getTable', 'getOrCreateTable', 'createTable', 'duplicateTable', 'exportTable', 'importTable', 'getTableJobs',
  'updateTable', 'renameTableColumn', 'deleteTable', 'getTableRow', 'findTableRows', 'createTableRows', 'updateTableRows',
  'upsertTableRows', 'deleteTableRows',
] as const

const str = (a: Args, key: string): string => {
  const v = a[key]
  if (typeof v !== 'string' || v === '') throw errors.invalidPayload(`${key} must be a non-empty string`)
  return v
}
const rows = (a: Args): Record<string, unknown>[] => {
  const v = a.rows
  if (!Array.isArray(v)) throw errors.invalidPayload('rows must be an array of objects')
  return v as Record<string, unknown>[]
}
const opt = <T>(a: Args, key: string, type: 'string' | 'number' | 'boolean' | 'object'): T | undefined => {
  const v = a[key]
  if (v === undefined) return undefined
  if (type === 'object' ? typeof v !== 'object' || v === null || Array.isArray(v) : typeof v !== type) throw errors.invalidPayload(`${key} must be a ${type}`)
  return v as T
}

/** A table operation of the sandboxed client, or undefined for any other method. */
export function sandboxTableCall(tables: TablesService, bot: BotRow, method: string, a: Args): Promise<unknown> | undefined {
  const botId = bot.id
  const table = () => str(a, 'table')
  const definition = () => ({
    schema: a.schema, keyColumn: a.keyColumn as string | null | undefined, factor: opt<number>(a, 'factor', 'number'),
    frozen: opt<boolean>(a, 'frozen', 'boolean'), tags: opt<Record<string, string>>(a, 'tags', 'object'), isComputeEnabled: opt<boolean>(a, 'isComputeEnabled', 'boolean'),
  })
  const withColumns = async <T>(fn: (columns: string[]) => T) => fn(await tables.columns(botId, table()))
  switch (method) {
    case 'listTables':
      return tables.listTables(botId, opt(a, 'tags', 'object')).then((t) => ({ tables: t.map(tableView) }))
    case 'getTable':
      return tables.getTable(botId, table()).then((r) => ({ table: tableView(r.table), rows: r.rows, stale: 0, indexing: 0 }))
    case 'getOrCreateTable':
      return tables.getOrCreateTable(botId, table(), definition()).then((r) => ({ table: tableView(r.table), created: r.created, rows: r.rows, stale: 0, indexing: 0 }))
    case 'createTable':
      return tables.createTable(botId, { ...definition(), name: str(a, 'name') }).then((t) => ({ table: tableView(t) }))
    case 'duplicateTable':
      return tables.duplicateTable(botId, str(a, 'sourceTableId'), { tableName: opt(a, 'tableName', 'string'), schemaOnly: opt(a, 'schemaOnly', 'boolean'), factor: opt(a, 'factor', 'number') })
        .then((r) => ({ table: tableView(r.table), rows: r.rows }))
    case 'exportTable':
      return tables.queueExport(botId, table(), a.format === 'csv' ? 'csv' : 'json', a.compress === true).then((j) => ({ job: jobView(j) }))
    case 'importTable':
      return tables.queueImport(botId, table(), str(a, 'fileId')).then((j) => ({ job: jobView(j) }))
    case 'getTableJobs':
      return tables.listJobs(botId, table()).then((j) => ({ jobs: j.map(jobView) }))
    case 'updateTable':
      return tables.updateTable(botId, table(), { ...definition(), name: opt(a, 'name', 'string') }).then((r) => ({ table: tableView(r.table), staleColumns: r.staleColumns }))
    case 'renameTableColumn':
      return tables.renameColumn(botId, table(), str(a, 'name'), str(a, 'newName')).then((t) => ({ table: tableView(t) }))
    case 'deleteTable':
      return tables.deleteTable(botId, table()).then(() => ({}))
    case 'getTableRow': {
      const id = a.id
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw errors.invalidPayload('id must be an integer row id')
      return tables.getRow(botId, table(), id).then((r) => withColumns((c) => ({ row: rowView(r, c) })))
    }
    case 'findTableRows':
      return tables.findRows(botId, table(), {
        limit: opt(a, 'limit', 'number'), offset: opt(a, 'offset', 'number'), filter: a.filter, group: a.group, search: opt(a, 'search', 'string'),
        select: a.select as string[] | undefined, orderBy: opt(a, 'orderBy', 'string'), orderDirection: a.orderDirection === 'desc' ? 'desc' : a.orderDirection === undefined ? undefined : 'asc',
      }).then((r) => ({
        rows: r.grouped ? r.rows : (r.rows as Parameters<typeof rowView>[0][]).map((row) => rowView(row, r.columns, r.select)),
        hasMore: r.hasMore, offset: r.offset, limit: r.limit, ...(r.warnings.length > 0 && { warnings: r.warnings }),
      }))
    case 'createTableRows':
    case 'updateTableRows': {
      const run = method === 'createTableRows' ? tables.createRows(botId, table(), rows(a)) : tables.updateRows(botId, table(), rows(a))
      return run.then((r) => withColumns((c) => ({ rows: r.rows.map((row) => rowView(row, c)), ...(r.errors.length > 0 && { errors: r.errors }), ...(r.warnings.length > 0 && { warnings: r.warnings }) })))
    }
    case 'upsertTableRows':
      return tables.upsertRows(botId, table(), rows(a), opt(a, 'keyColumn', 'string')).then((r) => withColumns((c) => ({
        inserted: r.inserted.map((row) => rowView(row, c)), updated: r.updated.map((row) => rowView(row, c)),
        ...(r.errors.length > 0 && { errors: r.errors }), ...(r.warnings.length > 0 && { warnings: r.warnings }),
      })))
    case 'deleteTableRows':
      return tables.deleteRows(botId, table(), { ids: a.ids as number[] | undefined, filter: a.filter, deleteAllRows: opt(a, 'deleteAllRows', 'boolean') })
        .then((r) => ({ deletedRows: r.deletedRows, ...(r.job && { job: { id: r.job.id, status: r.job.status } }) }))
    default:
      return undefined
  }
}
