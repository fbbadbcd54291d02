import type { JsonObject } from './rows.js'

/**
 * The Tables API's storage (migrations/<dialect>/0009_tables.sql): a bot's tables, their rows (one
 * JSON document per row) and the tables' background jobs. Queries arrive as a validated condition
 * tree (RowCondition, built by src/domain/tables/filter.ts from the client's mongo-like filter); each
 * engine compiles it to parameterised SQL: values are always bound parameters, and the only
 * identifiers written into SQL text are column names and nested path segments the domain checked
 * against the table's schema and the strict pattern COLUMN_NAME (letters, digits, underscores).
 */

/** Column names and the segments of dot paths into object columns: also what may appear in SQL text. */
export const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

export type JsonType = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null'
export type Scalar = string | number | boolean | null

export interface TableDefinition {
  /** The table's JSON Schema (type object, properties with x-zui). */
  schema: JsonObject
  keyColumn: string | null
  factor: number
  frozen: boolean
  tags: Record<string, string>
  isComputeEnabled: boolean
}

export interface TableRow {
  id: string
  botId: string
  name: string
  definition: TableDefinition
  createdAt: number
  updatedAt: number
}

/** A stored row (the API adds `computed`). */
export interface TableRecord {
  id: number
  data: JsonObject
  createdAt: number
  updatedAt: number
  /** findRows with a search: the share of the search's terms found in the row's searchable text (0..1]. */
  similarity?: number
}

export interface NewRecord {
  data: JsonObject
  /** JSON text of the key column's value; null when the table has none or the value is null. */
  keyValue: string | null
  searchText: string | null
}

/** A field of a condition: a built-in column, or a path into the row's document. */
export type FieldRef =
  | { kind: 'id' }
  | { kind: 'createdAt' }
  | { kind: 'updatedAt' }
  /** `path[0]` is a column of the schema; further segments go into an object column. */
  | { kind: 'json'; path: string[]; type?: JsonType | undefined; isKey?: boolean; indexed?: boolean }

export type RowCondition =
  | { op: 'and' | 'or'; items: RowCondition[] }
  | { op: 'not'; item: RowCondition }
  | { op: 'true' }
  /** Mongo-like comparison: a value of another JSON type never matches (neither does a missing one). */
  | { op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte'; field: FieldRef; value: string | number | boolean }
  /** The field is missing or null. */
  | { op: 'isNull'; field: FieldRef }
  | { op: 'in'; field: FieldRef; values: Scalar[] }
  | { op: 'exists'; field: FieldRef }
  /** A pattern the domain checked (src/lib/linear-regex.ts: RE2 syntax, the accepted subset); flags: 'i' or ''. */
  | { op: 'regex'; field: FieldRef; pattern: string; flags: string }
  /** The field's JSON type is one of `types` (schema changes: find rows a new type would break). */
  | { op: 'typeIn'; field: FieldRef; types: JsonType[] }

export type Aggregate = 'key' | 'avg' | 'max' | 'min' | 'sum' | 'count'

export interface GroupSpec {
  field: FieldRef & { kind: 'json' }
  /** The output name's prefix (the column name). */
  name: string
  ops: Aggregate[]
}

export interface RowQuery {
  where: RowCondition
  /** Lower-cased search terms; rows match when their search text contains at least one. */
  search?: string[] | undefined
  orderBy?: { field: FieldRef; direction: 'asc' | 'desc' } | undefined
  limit: number
  offset: number
  /**
   * The table as the caller built the query from (its id, bot, name and stored definition text): the same
   * statement then says whether the table is still exactly that (`current`), so that a caller may build
   * queries from a definition it read earlier and still never answer from a changed schema.
   */
  expect?: { botId: string; name: string; definition: string } | undefined
}

export type JobType = 'export' | 'import' | 'delete_rows'
export type JobStatus = 'pending' | 'in_progress' | 'finalizing' | 'completed' | 'failed'

export interface TableJobRow {
  id: string
  botId: string
  tableId: string
  type: JobType
  status: JobStatus
  progress: number
  params: JsonObject
  inputFileId: string | null
  outputFileId: string | null
  error: string | null
  attempts: number
  createdAt: number
  updatedAt: number
}

export interface JobPatch { status?: JobStatus; progress?: number; params?: JsonObject; outputFileId?: string; error?: string }
export interface ImportBatchJob { id: string; owner: string; leaseUntil: number; patch: (inserted: (TableRecord | undefined)[]) => JobPatch }

export interface TableStore {
  /** Throws UniqueViolation when the bot already has a table of that name. */
  createTable(row: TableRow): Promise<void>
  /** By id or by name, within the bot. */
  getTable(botId: string, idOrName: string): Promise<TableRow | undefined>
  listTables(botId: string): Promise<TableRow[]>
  /** Throws UniqueViolation on a taken name. `renameColumn` rewrites every row's document in the same transaction. */
  updateTable(id: string, patch: { name?: string; definition?: TableDefinition; renameColumn?: { from: string; to: string } }, now: number): Promise<TableRow | undefined>
  /**
   * The table's column indexes (partial expression indexes on its rows' typed values) made to be exactly
   * these: missing ones created, others dropped. deleteTable drops them all.
   */
  syncIndexes(tableId: string, columns: { name: string; type: 'string' | 'number' }[]): Promise<void>
  deleteTable(id: string): Promise<boolean>
  /** A new table with the source's rows copied (same documents, new ids), in one transaction. */
  duplicateTable(sourceId: string, row: TableRow, withRows: boolean): Promise<number>
  countRows(tableId: string): Promise<number>

  /** Inserts in order; a row whose key value is taken is not inserted (undefined in its place). */
  insertRows(tableId: string, rows: NewRecord[], now: number): Promise<(TableRecord | undefined)[]>
  getRows(tableId: string, ids: number[]): Promise<TableRecord[]>
  getRowsByKey(tableId: string, keyValues: string[]): Promise<(TableRecord & { keyValue: string })[]>
  /** Replaces the documents of existing rows; undefined for an id not in the table or a key value taken by another row. */
  replaceRows(tableId: string, rows: (NewRecord & { id: number })[], now: number): Promise<(TableRecord | undefined)[]>
  deleteRowsById(tableId: string, ids: number[]): Promise<number>
  /** Deletes at most `limit` rows matching `where` (lowest ids first); the count deleted. */
  deleteRowsWhere(tableId: string, where: RowCondition, limit: number): Promise<number>
  /** A page of rows; `hasMore` when more rows match beyond it. */
  /**
   * `current` (with `query.expect` only, and only when a row matched): whether the table was still as
   * expected in the snapshot the rows come from. Undefined when no row matched (nothing to tell then).
   */
  findRows(tableId: string, query: RowQuery): Promise<{ rows: TableRecord[]; hasMore: boolean; current?: boolean | undefined }>
  /** Groups of the matching rows, ordered by their keys. Output names: `<name><Op>` (priceSum, categoryKey). */
  groupRows(tableId: string, where: RowCondition, group: GroupSpec[], limit: number, offset: number): Promise<{ rows: JsonObject[]; hasMore: boolean }>
  /** Rows with id > afterId, in id order (exports, schema checks). */
  scanRows(tableId: string, afterId: number, limit: number): Promise<TableRecord[]>

  createJob(job: TableJobRow): Promise<void>
  getJob(id: string): Promise<TableJobRow | undefined>
  listJobs(tableId: string, limit: number): Promise<TableJobRow[]>
  /** Leases the oldest pending or in-progress job whose lease is free or expired. Atomic across instances. */
  claimJob(owner: string, now: number, leaseMs: number): Promise<TableJobRow | undefined>
  /** Progress, params (a cursor), status of a job `owner` holds, lease renewed; false when the lease was lost. */
  updateJob(id: string, owner: string, patch: JobPatch, now: number, leaseUntil: number): Promise<boolean>
  /**
   * One batch of an import: insertRows and the job's updateJob (its cursor, from `job.patch` given what
   * was inserted) in one transaction. Undefined, with nothing inserted, when `job.owner` lost the lease.
   */
  importBatch(tableId: string, rows: NewRecord[], now: number, job: ImportBatchJob): Promise<(TableRecord | undefined)[] | undefined>
  /** Gives a claimed job back (shutdown). */
  releaseJob(id: string, owner: string): Promise<void>
}
