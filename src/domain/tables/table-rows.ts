/*
 * A bot's table loaded for its rows (its columns and filter context), and rows checked against its schema and
 * recorded as stored: what TablesService's row operations and TableJobs' imports share.
 */
import { errors } from '../../lib/errors.js'
import type { Slices } from '../../lib/slices.js'
import type { JsonObject } from '../../store/store.js'
import type { NewRecord, TableDefinition, TableRow, TableStore } from '../../store/table-store.js'
import type { FilterContext } from './filter.js'
import { checkRow, columnsOf, searchTextOf, type Column } from './table-schema.js'

/** String and number columns indexed per table (besides the key column). */
export const INDEXED_COLUMNS = 8

export interface Loaded { table: TableRow; cols: Map<string, Column>; ctx: FilterContext }

/** The columns with an index of their own: string and number columns other than the key, the first INDEXED_COLUMNS in schema order. */
export function indexedColumns(d: TableDefinition, cols: Map<string, Column>): { name: string; type: 'string' | 'number' }[] {
  return [...cols.values()]
    .filter((c): c is Column & { type: 'string' | 'number' } => (c.type === 'string' || c.type === 'number') && c.name !== d.keyColumn)
    .slice(0, INDEXED_COLUMNS)
    .map((c) => ({ name: c.name, type: c.type }))
}

export class TableRows {
  constructor(private readonly tables: TableStore) {}

  /** The bot's table by id or name (404 for an unknown one, or another bot's). */
  async require(botId: string, idOrName: string): Promise<TableRow> {
    const table = typeof idOrName === 'string' && idOrName.length <= 200 ? await this.tables.getTable(botId, idOrName) : undefined
    if (!table) throw errors.notFound('Table', String(idOrName).slice(0, 200))
    return table
  }

  /** The table with its columns and the filter context (404 for another bot's table). */
  async load(botId: string, idOrName: string): Promise<Loaded> {
    const table = await this.require(botId, idOrName)
    const cols = columnsOf(table.definition.schema)
    return { table, cols, ctx: { columns: cols, keyColumn: table.definition.keyColumn, indexed: new Set(indexedColumns(table.definition, cols).map((c) => c.name)) } }
  }

  /** A checked row as stored (key value and search text). */
  record(table: TableRow, cols: Map<string, Column>, data: JsonObject): NewRecord {
    const key = table.definition.keyColumn
    const kv = key !== null && data[key] !== undefined && data[key] !== null ? JSON.stringify(data[key]) : null
    return { data, keyValue: kv, searchText: searchTextOf(cols, data) }
  }

  /** checkRow, reporting a problem in `out.errors` (undefined then); the row's bytes count towards `slices`. */
  check(table: TableRow, cols: Map<string, Column>, input: unknown, index: number, out: { errors: string[]; warnings: string[] }, slices?: Slices, base?: JsonObject): JsonObject | undefined {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) { out.errors.push(`Row ${index}: must be an object`); return undefined }
    try {
      const r = checkRow(cols, input as Record<string, unknown>, table.definition.factor, base)
      for (const w of r.warnings) if (!out.warnings.includes(w)) out.warnings.push(w)
      slices?.count(r.bytes)
      return r.data
    } catch (problem) {
      if (typeof problem !== 'string') throw problem
      out.errors.push(`Row ${index}: ${problem}`)
      return undefined
    }
  }
}
