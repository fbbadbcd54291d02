import { ApiError, errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { Slices } from '../lib/slices.js'
import type { Json, JsonObject, Store } from '../store/store.js'
import { UniqueViolation } from '../store/store.js'
import type {
  Aggregate, GroupSpec, NewRecord, RowCondition, TableDefinition, TableJobRow, TableRecord, TableRow, TableStore,
} from '../store/table-store.js'
import { parseField, parseFilter, type FilterContext } from './tables/filter.js'
import { columnProblem, columnsOf, normalizeSchema, searchTerms, TABLE_LIMITS, type Column } from './tables/table-schema.js'
import { TableJobs, type TableJobsOptions } from './tables/table-jobs.js'
import { indexedColumns, TableRows, type Loaded } from './tables/table-rows.js'
import type { FileService } from './file-service.js'

export { TABLE_LIMITS } from './tables/table-schema.js'
export { INDEXED_COLUMNS } from './tables/table-rows.js'

/** Table names as Botpress accepts them: a letter or underscore first, letters, digits, underscores, ending in "Table". */
export const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,44}Table$/
/** How long deleteTableRows (filter, deleteAllRows) waits for its job before answering with the job only. */
const DELETE_WAIT_MS = 5_000

export const FIND_LIMITS = { defaultLimit: 100, maxLimit: 1000, maxOffset: 1_000_000, maxSearch: 1000, maxSelect: 30 } as const

export interface TableInput {
  name?: string | undefined
  schema?: unknown
  keyColumn?: string | null | undefined
  factor?: number | undefined
  frozen?: boolean | undefined
  tags?: Record<string, string> | undefined
  isComputeEnabled?: boolean | undefined
}

export interface FindInput {
  limit?: number | undefined
  offset?: number | undefined
  filter?: unknown
  group?: unknown
  search?: string | undefined
  select?: string[] | undefined
  orderBy?: string | undefined
  orderDirection?: 'asc' | 'desc' | undefined
}

/** A row as the API returns it (before the HTTP view renders the dates). */
export interface RowOut { record: TableRecord; select?: string[] | undefined }

export interface RowsResult { rows: TableRecord[]; errors: string[]; warnings: string[] }

/** A table as read before, with its definition as stored (JSON text), for queries built without reading it again. */
interface Known extends Loaded { text: string }
/** Tables remembered by findRows (per bot and id or name), oldest forgotten first. */
const KNOWN_TABLES = 1000

export interface FoundRows {
  rows: JsonObject[] | TableRecord[]; grouped: boolean; hasMore: boolean; limit: number; offset: number
  columns: string[]; select?: string[] | undefined; warnings: string[]
}

/**
 * The Tables API's rules, in one place for the HTTP routes and the sandboxed bot's client: a bot's
 * tables (schema, key column, factor, frozen, tags), their rows (checked against the schema per row),
 * queries (filters compiled by the store), and the jobs (TableJobs runs them).
 */
export class TablesService {
  private readonly tables: TableStore
  /** A bot's tables loaded for their rows, and the rows checked and recorded (shared with TableJobs). */
  private readonly rows: TableRows
  /** The background worker of the jobs (import, export, delete by filter), when this service runs them. */
  readonly jobs: TableJobs | undefined
  private readonly clock: () => number

  private readonly known = new Map<string, Known>()

  /** `jobs`: this service runs the jobs it queues (its imports read and its exports write files through `files`). */
  constructor(store: Store, options: { clock?: () => number; jobs?: TableJobsOptions & { files: FileService } } = {}) {
    this.tables = store.tables
    this.rows = new TableRows(store.tables)
    this.clock = options.clock ?? Date.now
    if (options.jobs) {
      const { files, ...settings } = options.jobs
      this.jobs = new TableJobs(store, this.rows, files, settings)
    }
  }

  // ---- tables ----

  async listTables(botId: string, tags?: Record<string, string>): Promise<TableRow[]> {
    const all = await this.tables.listTables(botId)
    if (!tags || Object.keys(tags).length === 0) return all
    return all.filter((t) => Object.entries(tags).every(([k, v]) => t.definition.tags[k] === v))
  }

  async getTable(botId: string, idOrName: string): Promise<{ table: TableRow; rows: number }> {
    const table = await this.rows.require(botId, idOrName)
    return { table, rows: await this.tables.countRows(table.id) }
  }

  async createTable(botId: string, input: TableInput & { name: string }): Promise<TableRow> {
    const now = this.clock()
    const table: TableRow = { id: `table_${uuidv7().replace(/-/g, '')}`, botId, name: this.checkName(input.name), definition: this.definition(input), createdAt: now, updatedAt: now }
    try {
      await this.tables.createTable(table)
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Table', input.name)
      throw err
    }
    await this.syncIndexes(table)
    return table
  }

  async getOrCreateTable(botId: string, name: string, input: TableInput): Promise<{ table: TableRow; created: boolean; rows: number }> {
    const existing = await this.tables.getTable(botId, name)
    if (existing) return { table: existing, created: false, rows: await this.tables.countRows(existing.id) }
    try {
      return { table: await this.createTable(botId, { ...input, name }), created: true, rows: 0 }
    } catch (err) {
      // Created concurrently: the winner's table.
      const again = err instanceof ApiError && err.type === 'AlreadyExists' ? await this.tables.getTable(botId, name) : undefined
      if (again) return { table: again, created: false, rows: await this.tables.countRows(again.id) }
      throw err
    }
  }

  async updateTable(botId: string, idOrName: string, input: TableInput): Promise<{ table: TableRow; staleColumns: string[] }> {
    const { table, cols } = await this.rows.load(botId, idOrName)
    const old = table.definition
    const frozen = input.frozen ?? old.frozen
    if (old.frozen && frozen && (input.name !== undefined && input.name !== table.name || input.schema !== undefined)) {
      throw errors.invalidPayload(`Table "${table.name}" is frozen: its name and schema cannot change (unfreeze it first with frozen: false)`)
    }
    const definition: TableDefinition = {
      schema: input.schema !== undefined ? normalizeSchema(input.schema) : old.schema,
      keyColumn: input.keyColumn !== undefined ? input.keyColumn : old.keyColumn,
      factor: input.factor ?? old.factor,
      frozen,
      tags: input.tags !== undefined ? this.mergeTags(old.tags, input.tags) : old.tags,
      isComputeEnabled: input.isComputeEnabled ?? old.isComputeEnabled,
    }
    if (definition.factor < old.factor) throw errors.invalidPayload(`factor can only increase (${old.factor} → ${definition.factor} refused)`)
    this.checkDefinition(definition)
    const newCols = columnsOf(definition.schema)
    if (input.schema !== undefined) await this.checkSchemaChange(table, cols, newCols)
    const rekey = definition.keyColumn !== old.keyColumn || [...newCols.values()].some((c) => c.searchable !== (cols.get(c.name)?.searchable ?? false))
    if (rekey) await this.reindex(table, definition, newCols)
    const name = input.name !== undefined ? this.checkName(input.name) : undefined
    try {
      const updated = await this.tables.updateTable(table.id, { ...(name !== undefined ? { name } : {}), definition }, this.clock())
      if (!updated) throw errors.notFound('Table', idOrName)
      await this.syncIndexes(updated)
      return { table: updated, staleColumns: [] }
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Table', input.name ?? '')
      throw err
    }
  }

  async renameColumn(botId: string, idOrName: string, from: string, to: string): Promise<TableRow> {
    const { table, cols } = await this.rows.load(botId, idOrName)
    if (table.definition.frozen) throw errors.invalidPayload(`Table "${table.name}" is frozen: its columns cannot be renamed`)
    if (!cols.has(from)) throw errors.invalidPayload(`Column "${from}" does not exist in table "${table.name}"`)
    if (cols.has(to)) throw errors.invalidPayload(`Column "${to}" already exists in table "${table.name}"`)
    const props = table.definition.schema.properties as JsonObject
    const renamed: JsonObject = {}
    for (const [k, v] of Object.entries(props)) renamed[k === from ? to : k] = v
    const required = ((table.definition.schema.required ?? []) as string[]).map((r) => (r === from ? to : r))
    const schema = normalizeSchema({ ...table.definition.schema, properties: renamed, required })
    const definition = { ...table.definition, schema, keyColumn: table.definition.keyColumn === from ? to : table.definition.keyColumn }
    const updated = await this.tables.updateTable(table.id, { definition, renameColumn: { from, to } }, this.clock())
    if (!updated) throw errors.notFound('Table', idOrName)
    await this.syncIndexes(updated)
    return updated
  }

  async deleteTable(botId: string, idOrName: string): Promise<void> {
    const table = await this.rows.require(botId, idOrName)
    await this.tables.deleteTable(table.id)
  }

  async duplicateTable(botId: string, sourceIdOrName: string, input: { tableName?: string | undefined; schemaOnly?: boolean | undefined; factor?: number | undefined }): Promise<{ table: TableRow; rows: number }> {
    const source = await this.rows.require(botId, sourceIdOrName)
    const now = this.clock()
    const name = this.checkName(input.tableName ?? `${source.name.slice(0, -'Table'.length).slice(0, 35)}CopyTable`)
    const definition = { ...source.definition, factor: input.factor ?? source.definition.factor, frozen: false }
    this.checkDefinition(definition)
    if (definition.factor < source.definition.factor && !input.schemaOnly) {
      throw errors.invalidPayload('factor cannot be lower than the source table\'s when rows are copied (use schemaOnly)')
    }
    const table: TableRow = { id: `table_${uuidv7().replace(/-/g, '')}`, botId, name, definition, createdAt: now, updatedAt: now }
    try {
      const rows = await this.tables.duplicateTable(source.id, table, !input.schemaOnly)
      await this.syncIndexes(table)
      return { table, rows }
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Table', name)
      throw err
    }
  }

  // ---- rows ----

  async getRow(botId: string, idOrName: string, id: number): Promise<TableRecord> {
    const table = await this.rows.require(botId, idOrName)
    const [row] = await this.tables.getRows(table.id, [id])
    if (!row) throw errors.notFound('Row', String(id))
    return row
  }

  async createRows(botId: string, idOrName: string, rows: Record<string, unknown>[]): Promise<RowsResult> {
    const { table, cols } = await this.rows.load(botId, idOrName)
    this.checkCount(rows)
    const out: RowsResult = { rows: [], errors: [], warnings: [] }
    const accepted: { index: number; row: NewRecord }[] = []
    const slices = new Slices()
    for (const [index, input] of rows.entries()) {
      const checked = this.rows.check(table, cols, input, index, out, slices)
      if (checked) accepted.push({ index, row: this.rows.record(table, cols, checked) })
      await slices.yieldIfDue()
    }
    const inserted = await this.tables.insertRows(table.id, accepted.map((a) => a.row), this.clock())
    inserted.forEach((r, i) => {
      if (r) out.rows.push(r)
      else out.errors.push(`Row ${accepted[i]!.index}: key column "${table.definition.keyColumn}" value ${accepted[i]!.row.keyValue} is already used by another row`)
    })
    return out
  }

  async updateRows(botId: string, idOrName: string, rows: Record<string, unknown>[]): Promise<RowsResult> {
    const { table, cols } = await this.rows.load(botId, idOrName)
    this.checkCount(rows)
    const out: RowsResult = { rows: [], errors: [], warnings: [] }
    const ids = rows.map((r) => r.id)
    const bad = ids.findIndex((id) => !Number.isSafeInteger(id))
    if (bad >= 0) throw errors.invalidPayload(`rows[${bad}].id must be an integer row id`)
    const existing = new Map((await this.tables.getRows(table.id, ids as number[])).map((r) => [r.id, r]))
    const replaced: { index: number; row: NewRecord & { id: number } }[] = []
    const slices = new Slices()
    for (const [index, input] of rows.entries()) {
      const base = existing.get(input.id as number)
      if (!base) { out.errors.push(`Row ${index}: no row ${String(input.id)} in table "${table.name}"`); continue }
      const checked = this.rows.check(table, cols, input, index, out, slices, base.data)
      if (checked) replaced.push({ index, row: { ...this.rows.record(table, cols, checked), id: base.id } })
      await slices.yieldIfDue()
    }
    const results = await this.tables.replaceRows(table.id, replaced.map((r) => r.row), this.clock())
    results.forEach((r, i) => {
      if (r) out.rows.push(r)
      else out.errors.push(`Row ${replaced[i]!.index}: not updated (deleted meanwhile, or its key column value is used by another row)`)
    })
    return out
  }

  async upsertRows(botId: string, idOrName: string, rows: Record<string, unknown>[], keyColumnIn?: string): Promise<{ inserted: TableRecord[]; updated: TableRecord[]; errors: string[]; warnings: string[] }> {
    const { table, cols } = await this.rows.load(botId, idOrName)
    this.checkCount(rows)
    const keyColumn = keyColumnIn ?? table.definition.keyColumn
    if (!keyColumn) throw errors.invalidPayload(`upsertTableRows needs a keyColumn (the table "${table.name}" has none)`)
    if (keyColumn !== table.definition.keyColumn && keyColumn !== 'id') {
      throw errors.invalidPayload(`keyColumn "${keyColumn}" is not the table's key column (${table.definition.keyColumn ?? 'none'}); set it with updateTable first`)
    }
    const out = { inserted: [] as TableRecord[], updated: [] as TableRecord[], errors: [] as string[], warnings: [] as string[] }
    const byKey = keyColumn === 'id' ? new Map<string, TableRecord>() : new Map((await this.tables.getRowsByKey(table.id, rows.flatMap((r) => (r[keyColumn] === undefined || r[keyColumn] === null ? [] : [JSON.stringify(r[keyColumn])])))).map((r) => [r.keyValue, r]))
    const byId = new Map((await this.tables.getRows(table.id, rows.flatMap((r) => (Number.isSafeInteger(r.id) ? [r.id as number] : []))).then((x) => x)).map((r) => [r.id, r]))
    const inserts: { index: number; row: NewRecord }[] = []
    const updates: { index: number; row: NewRecord & { id: number } }[] = []
    const slices = new Slices()
    for (const [index, input] of rows.entries()) {
      const target = Number.isSafeInteger(input.id) ? byId.get(input.id as number)
        : keyColumn !== 'id' && input[keyColumn] !== undefined && input[keyColumn] !== null ? byKey.get(JSON.stringify(input[keyColumn])) : undefined
      if (!target && keyColumn !== 'id' && (input[keyColumn] === undefined || input[keyColumn] === null) && input.id === undefined) {
        out.errors.push(`Row ${index}: the key column "${keyColumn}" has no value`)
        continue
      }
      const checked = this.rows.check(table, cols, input, index, out, slices, target?.data)
      await slices.yieldIfDue()
      if (!checked) continue
      if (target) updates.push({ index, row: { ...this.rows.record(table, cols, checked), id: target.id } })
      else inserts.push({ index, row: this.rows.record(table, cols, checked) })
    }
    const now = this.clock()
    const updated = await this.tables.replaceRows(table.id, updates.map((u) => u.row), now)
    updated.forEach((r, i) => { if (r) out.updated.push(r); else out.errors.push(`Row ${updates[i]!.index}: not updated (deleted meanwhile, or its key value is used by another row)`) })
    const inserted = await this.tables.insertRows(table.id, inserts.map((u) => u.row), now)
    inserted.forEach((r, i) => { if (r) out.inserted.push(r); else out.errors.push(`Row ${inserts[i]!.index}: its key value was inserted concurrently; retry`) })
    return out
  }

  /** By ids now; by filter or all rows: a delete_rows job, run at once by TableJobs (its count when it ends in time). */
  async deleteRows(botId: string, idOrName: string, input: { ids?: number[] | undefined; filter?: unknown; deleteAllRows?: boolean | undefined }): Promise<{ deletedRows: number; job?: TableJobRow }> {
    const { table, ctx } = await this.rows.load(botId, idOrName)
    const given = [input.ids !== undefined, input.filter !== undefined, input.deleteAllRows === true].filter(Boolean).length
    if (given !== 1) throw errors.invalidPayload('deleteTableRows takes exactly one of ids, filter or deleteAllRows: true')
    if (input.ids !== undefined) {
      if (input.ids.length > TABLE_LIMITS.maxRowsPerRequest) throw errors.invalidPayload(`At most ${TABLE_LIMITS.maxRowsPerRequest} ids per request`)
      return { deletedRows: await this.tables.deleteRowsById(table.id, input.ids) }
    }
    // Checked now, so that a bad filter is a 400 and not a failed job.
    if (input.filter !== undefined) parseFilter(input.filter, ctx)
    const job = await this.queueJob(table, 'delete_rows', { filter: (input.filter ?? null) as Json, deleted: 0 }, null)
    // Most deletes end in moments: wait a little so that the caller gets the count (the job stays listed).
    const deadline = this.clock() + DELETE_WAIT_MS
    while (this.jobs?.enabled && this.clock() < deadline) {
      await new Promise((r) => setTimeout(r, 10))
      const now = await this.tables.getJob(job.id)
      if (!now) break
      if (now.status === 'completed') return { deletedRows: Number(now.params.deleted ?? 0), job: now }
      if (now.status === 'failed') throw errors.invalidQuery(`The delete failed: ${now.error ?? 'unknown error'}`)
    }
    return { deletedRows: 0, job }
  }

  async findRows(botId: string, idOrName: string, input: FindInput): Promise<FoundRows> {
    // One round trip instead of two where it can: the query is built from the table as read before, and the
    // same statement says whether the table is still that (on PostgreSQL each statement is a round trip).
    const key = `${botId}\u0000${idOrName}`
    const known = input.group === undefined ? this.known.get(key) : undefined // groupRows has no check: read first
    if (known) {
      let found: { result: FoundRows; current?: boolean | undefined } | undefined
      try {
        found = await this.find(known, input, true)
      } catch (err) {
        if (!(err instanceof ApiError)) throw err // a refusal may come from an older schema: asked again below
      }
      if (found?.current === true) return found.result
      if (found && found.current === undefined) {
        // nothing matched: the answer stands if the table is still the one the query was built from
        const now = typeof idOrName === 'string' && idOrName.length <= 200 ? await this.tables.getTable(botId, idOrName) : undefined
        if (now && this.sameTable(now, known)) return found.result
      }
      this.known.delete(key)
    }
    const loaded = await this.rows.load(botId, idOrName)
    const entry = { ...loaded, text: JSON.stringify(loaded.table.definition) }
    if (this.known.size >= KNOWN_TABLES) this.known.delete(this.known.keys().next().value!)
    this.known.set(key, entry)
    return (await this.find(entry, input, false)).result
  }

  private sameTable(t: TableRow, known: Known): boolean {
    return t.id === known.table.id && t.name === known.table.name && JSON.stringify(t.definition) === known.text
  }

  private async find({ table, cols, ctx, text }: Known, input: FindInput, check: boolean): Promise<{ result: FoundRows; current?: boolean | undefined }> {
    const limit = input.limit ?? FIND_LIMITS.defaultLimit
    const offset = input.offset ?? 0
    if (!Number.isInteger(limit) || limit < 1 || limit > FIND_LIMITS.maxLimit) throw errors.invalidQuery(`limit must be an integer from 1 to ${FIND_LIMITS.maxLimit}`)
    if (!Number.isInteger(offset) || offset < 0 || offset > FIND_LIMITS.maxOffset) throw errors.invalidQuery(`offset must be an integer from 0 to ${FIND_LIMITS.maxOffset}`)
    const where = parseFilter(input.filter, ctx)
    const warnings: string[] = []
    if (input.group !== undefined) {
      const group = this.parseGroup(input.group, ctx, cols)
      const r = await this.tables.groupRows(table.id, where, group, limit, offset)
      return { result: { ...r, grouped: true, limit, offset, columns: [...cols.keys()], warnings } }
    }
    let search: string[] | undefined
    if (input.search !== undefined) {
      if (input.search.length > FIND_LIMITS.maxSearch) throw errors.invalidQuery(`search is longer than ${FIND_LIMITS.maxSearch} characters`)
      search = searchTerms(input.search)
      if (![...cols.values()].some((c) => c.searchable)) warnings.push(`table "${table.name}" has no searchable column: search matches nothing`)
      if (search.length === 0) search = undefined
    }
    if (input.select !== undefined) {
      if (input.select.length > FIND_LIMITS.maxSelect) throw errors.invalidQuery(`select lists more than ${FIND_LIMITS.maxSelect} columns`)
      for (const s of input.select) if (!cols.has(s) && s !== 'id' && s !== 'createdAt' && s !== 'updatedAt') throw errors.invalidQuery(`select: unknown column ${JSON.stringify(s.slice(0, 100))}`)
    }
    const orderBy = input.orderBy !== undefined ? { field: parseField(input.orderBy, ctx, 'orderBy'), direction: input.orderDirection ?? 'asc' } : undefined
    const expect = check ? { botId: table.botId, name: table.name, definition: text } : undefined
    const r = await this.tables.findRows(table.id, { where, search, orderBy, limit, offset, expect })
    return { result: { rows: r.rows, hasMore: r.hasMore, grouped: false, limit, offset, columns: [...cols.keys()], select: input.select, warnings }, current: r.current }
  }

  /** The columns of the table, for the views (columns no longer in the schema are not returned). */
  async columns(botId: string, idOrName: string): Promise<string[]> {
    return [...(await this.rows.load(botId, idOrName)).cols.keys()]
  }

  // ---- jobs ----

  async listJobs(botId: string, idOrName: string): Promise<TableJobRow[]> {
    const table = await this.rows.require(botId, idOrName)
    return this.tables.listJobs(table.id, 100)
  }

  async queueImport(botId: string, idOrName: string, fileId: string): Promise<TableJobRow> {
    const table = await this.rows.require(botId, idOrName)
    if (typeof fileId !== 'string' || fileId.length === 0 || fileId.length > 500) throw errors.invalidPayload('fileId must be a file id or key')
    return this.queueJob(table, 'import', { fileId, offset: 0 }, fileId)
  }

  async queueExport(botId: string, idOrName: string, format: 'csv' | 'json', compress: boolean): Promise<TableJobRow> {
    const table = await this.rows.require(botId, idOrName)
    return this.queueJob(table, 'export', { format, compress }, null)
  }

  private async queueJob(table: TableRow, type: TableJobRow['type'], params: JsonObject, inputFileId: string | null): Promise<TableJobRow> {
    const now = this.clock()
    const job: TableJobRow = {
      id: `job_${uuidv7().replace(/-/g, '')}`, botId: table.botId, tableId: table.id, type, status: 'pending', progress: 0, params,
      inputFileId, outputFileId: null, error: null, attempts: 0, createdAt: now, updatedAt: now,
    }
    await this.tables.createJob(job)
    this.jobs?.notify()
    return job
  }

  /** BotService cleaner: a deleted bot's tables go by cascade; their column indexes are dropped here. */
  async prepareBotCleanup(botId: string): Promise<() => Promise<void>> {
    const ids = (await this.tables.listTables(botId)).map((t) => t.id)
    return async () => {
      for (const id of ids) await this.tables.syncIndexes(id, [])
    }
  }

  /** The column indexes a definition gets: its string and number columns other than the key, first INDEXED_COLUMNS in schema order. */
  private async syncIndexes(table: TableRow): Promise<void> {
    await this.tables.syncIndexes(table.id, indexedColumns(table.definition, columnsOf(table.definition.schema)))
  }

  private checkName(name: string): string {
    if (typeof name !== 'string' || !TABLE_NAME.test(name)) {
      throw errors.invalidPayload(`Table name ${JSON.stringify(String(name).slice(0, 100))} is invalid: letters, digits and underscores, starting with a letter or underscore, ending with "Table", at most 50 characters`)
    }
    return name
  }

  private checkCount(rows: unknown[]): void {
    if (rows.length > TABLE_LIMITS.maxRowsPerRequest) throw errors.invalidPayload(`At most ${TABLE_LIMITS.maxRowsPerRequest} rows per request (got ${rows.length})`)
  }

  private definition(input: TableInput): TableDefinition {
    if (input.schema === undefined) throw errors.invalidPayload('schema is required')
    const d: TableDefinition = {
      schema: normalizeSchema(input.schema), keyColumn: input.keyColumn ?? null, factor: input.factor ?? 1, frozen: input.frozen ?? false,
      tags: this.mergeTags({}, input.tags ?? {}), isComputeEnabled: input.isComputeEnabled ?? false,
    }
    this.checkDefinition(d)
    return d
  }

  private mergeTags(old: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
    const tags = { ...old }
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === '') delete tags[k]
      else tags[k] = v
    }
    if (Object.keys(tags).length > TABLE_LIMITS.maxTags) throw errors.invalidPayload(`At most ${TABLE_LIMITS.maxTags} tags`)
    return tags
  }

  private checkDefinition(d: TableDefinition): void {
    if (!Number.isInteger(d.factor) || d.factor < 1 || d.factor > TABLE_LIMITS.maxFactor) throw errors.invalidPayload(`factor must be an integer from 1 to ${TABLE_LIMITS.maxFactor}`)
    if (d.keyColumn !== null) {
      const col = columnsOf(d.schema).get(d.keyColumn)
      if (!col) throw errors.invalidPayload(`keyColumn "${d.keyColumn}" is not a column of the schema`)
      if (col.type !== 'string' && col.type !== 'number') throw errors.invalidPayload(`keyColumn "${d.keyColumn}" must be a string or number column (it is ${col.type})`)
    }
  }

  /** Refuses a schema that existing rows break, with the first such row and the reason. */
  private async checkSchemaChange(table: TableRow, oldCols: Map<string, Column>, newCols: Map<string, Column>): Promise<void> {
    for (const col of newCols.values()) {
      const old = oldCols.get(col.name)
      const conditions: { cond: RowCondition; why: string }[] = []
      const field = { kind: 'json' as const, path: [col.name] }
      if (!old || old.type !== col.type) {
        conditions.push({ cond: { op: 'and', items: [{ op: 'exists', field }, { op: 'not', item: { op: 'typeIn', field, types: [col.type, 'null'] } }] }, why: `holds a value that is not of the new type ${col.type}` })
      }
      if (col.required && (!old || !old.required)) {
        conditions.push({ cond: { op: 'isNull', field }, why: `has no value for the now required column` })
      }
      for (const { cond, why } of conditions) {
        const { rows } = await this.tables.findRows(table.id, { where: cond, limit: 1, offset: 0 })
        if (rows[0]) throw new ApiError('BreakingChanges', `Schema change refused: column "${col.name}": row ${rows[0].id} ${why}`)
      }
      // Constraints that only a scan can check (enum, pattern, format, nested types).
      if (col.type === old?.type && (col.enum || col.pattern || col.dateTime || col.itemsType || col.properties)) {
        let after = 0
        for (;;) {
          const page = await this.tables.scanRows(table.id, after, 1000)
          for (const r of page) {
            const v = r.data[col.name]
            if (v === undefined || v === null) continue
            const problem = columnProblem(col, v)
            if (problem) throw new ApiError('BreakingChanges', `Schema change refused: row ${r.id}: ${problem}`)
          }
          if (page.length < 1000) break
          after = page[page.length - 1]!.id
        }
      }
    }
  }

  /** A new key column or new searchable columns: every row's key value and search text again (refused on a duplicate key). */
  private async reindex(table: TableRow, definition: TableDefinition, cols: Map<string, Column>): Promise<void> {
    const seen = new Set<string>()
    const updates: (NewRecord & { id: number })[] = []
    const next = { ...table, definition }
    let after = 0
    for (;;) {
      const page = await this.tables.scanRows(table.id, after, 1000)
      for (const r of page) {
        const rec = this.rows.record(next, cols, r.data)
        if (rec.keyValue !== null) {
          if (seen.has(rec.keyValue)) throw new ApiError('BreakingChanges', `keyColumn "${definition.keyColumn}" refused: the value ${rec.keyValue} appears in more than one row (row ${r.id})`)
          seen.add(rec.keyValue)
        }
        updates.push({ ...rec, id: r.id })
      }
      if (page.length < 1000) break
      after = page[page.length - 1]!.id
    }
    // Clear the old key values first, so that swapping values between rows cannot collide.
    await this.tables.replaceRows(table.id, updates.map((u) => ({ ...u, keyValue: null })), this.clock())
    await this.tables.replaceRows(table.id, updates, this.clock())
  }

  private parseGroup(group: unknown, ctx: FilterContext, cols: Map<string, Column>): GroupSpec[] {
    if (typeof group !== 'object' || group === null || Array.isArray(group)) throw errors.invalidQuery('group must be an object: { column: "key" | ["key", "sum", …] }')
    const entries = Object.entries(group)
    if (entries.length === 0 || entries.length > 20) throw errors.invalidQuery('group names 1 to 20 columns')
    const OPS: Aggregate[] = ['key', 'avg', 'max', 'min', 'sum', 'count']
    const specs = entries.map(([name, v]) => {
      const ops = Array.isArray(v) ? v : [v]
      if (ops.length === 0 || ops.length > OPS.length || !ops.every((o) => typeof o === 'string' && OPS.includes(o as Aggregate))) {
        throw errors.invalidQuery(`group.${name.slice(0, 100)}: each operation is one of ${OPS.join(', ')}`)
      }
      const field = parseField(name, ctx, 'group')
      if (field.kind !== 'json') throw errors.invalidQuery(`group: ${name} cannot be grouped (a column of the schema can)`)
      const col = cols.get(name)!
      for (const op of ops as Aggregate[]) {
        if ((op === 'sum' || op === 'avg') && col.type !== 'number') throw errors.invalidQuery(`group.${name}: ${op} needs a number column (it is ${col.type})`)
        if ((op === 'min' || op === 'max') && col.type !== 'number' && col.type !== 'string') throw errors.invalidQuery(`group.${name}: ${op} needs a number or string column`)
      }
      return { field, name, ops: [...new Set(ops as Aggregate[])] }
    })
    return specs
  }
}
