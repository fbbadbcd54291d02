import { errors } from '../../lib/errors.js'
import type { Json, JsonObject } from '../../store/store.js'
import { COLUMN_NAME, type JsonType } from '../../store/table-store.js'
import { compileLinearRegex, type LinearRegex } from '../../lib/linear-regex.js'
import { checkSafeRegex } from './safe-regex.js'

export const TABLE_LIMITS = {
  maxColumns: 20,
  /** Row size limit: 4 KB × the table's factor (JSON text of the row's columns). */
  rowBytesPerFactor: 4096,
  maxFactor: 30,
  maxRowsPerRequest: 1000,
  maxNameLength: 50,
  maxTags: 50,
} as const

const TYPES: readonly JsonType[] = ['string', 'number', 'boolean', 'object', 'array', 'null']

export interface Column {
  name: string
  type: JsonType
  nullable: boolean
  required: boolean
  searchable: boolean
  enum?: string[] | undefined
  /** The schema `pattern`, compiled by the linear-time engine; or why a stored one is no longer accepted. */
  pattern?: LinearRegex | { refused: string } | undefined
  dateTime: boolean
  itemsType?: JsonType | undefined
  /** Types of nested properties of an object column (for dot paths). */
  properties?: Record<string, JsonType> | undefined
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A table schema as the client sends it: a JSON Schema object (`{ type: 'object', properties, required }`)
 * or the plain form (`{ column: { type: … } }`), normalised to the JSON Schema Botpress returns
 * (x-zui.index in column order, additionalProperties true). 400 with the reason otherwise.
 */
export function normalizeSchema(input: unknown): JsonObject {
  if (!isObject(input)) throw errors.invalidPayload('schema must be an object')
  // The plain form is a map of columns: its `type`/`properties` entries (if any) are column objects.
  const isJsonSchema = input.type === 'object' || (isObject(input.properties) && typeof input.properties.type !== 'string' && input.type === undefined)
  const properties = isJsonSchema ? input.properties ?? {} : input
  if (!isObject(properties)) throw errors.invalidPayload('schema.properties must be an object')
  const names = Object.keys(properties)
  if (names.length > TABLE_LIMITS.maxColumns) throw errors.invalidPayload(`A table has at most ${TABLE_LIMITS.maxColumns} columns (got ${names.length})`)
  const required = isJsonSchema && input.required !== undefined ? input.required : []
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && r in properties)) {
    throw errors.invalidPayload('schema.required must list columns of schema.properties')
  }
  const out: JsonObject = {}
  names.forEach((name, index) => {
    if (!COLUMN_NAME.test(name)) throw errors.invalidPayload(`Column name ${JSON.stringify(name)} is invalid: letters, digits and underscores, starting with a letter or underscore, at most 64 characters`)
    if (name === 'id' || name === 'createdAt' || name === 'updatedAt' || name === 'computed' || name === 'stale' || name === 'similarity') {
      throw errors.invalidPayload(`Column name "${name}" is reserved`)
    }
    const col = properties[name]
    if (!isObject(col)) throw errors.invalidPayload(`Column "${name}" must be an object with a type`)
    if (typeof col.type !== 'string' || !TYPES.includes(col.type as JsonType)) {
      throw errors.invalidPayload(`Column "${name}": type must be one of ${TYPES.join(', ')}`)
    }
    if (col.format !== undefined && col.format !== 'date-time') throw errors.invalidPayload(`Column "${name}": format must be date-time`)
    if (col.enum !== undefined && !(Array.isArray(col.enum) && col.enum.length <= 1000 && col.enum.every((e) => typeof e === 'string' && e.length <= 1000))) {
      throw errors.invalidPayload(`Column "${name}": enum must be a list of at most 1000 strings`)
    }
    if (col.pattern !== undefined) {
      if (typeof col.pattern !== 'string') throw errors.invalidPayload(`Column "${name}": pattern must be a string`)
      try { checkSafeRegex(col.pattern, `Column "${name}" pattern`) } catch (err) { throw errors.invalidPayload((err as Error).message) }
    }
    if (col.items !== undefined && !(isObject(col.items) && TYPES.includes(col.items.type as JsonType))) {
      throw errors.invalidPayload(`Column "${name}": items must be an object with a type`)
    }
    if (col.properties !== undefined) {
      if (!isObject(col.properties)) throw errors.invalidPayload(`Column "${name}": properties must be an object`)
      for (const [k, v] of Object.entries(col.properties)) {
        if (!COLUMN_NAME.test(k) || !isObject(v) || !TYPES.includes(v.type as JsonType)) {
          throw errors.invalidPayload(`Column "${name}": nested property ${JSON.stringify(k)} needs a valid name and a type`)
        }
      }
    }
    const zui = isObject(col['x-zui']) ? col['x-zui'] : {}
    if (zui.searchable !== undefined && typeof zui.searchable !== 'boolean') throw errors.invalidPayload(`Column "${name}": x-zui.searchable must be a boolean`)
    out[name] = { ...(col as JsonObject), 'x-zui': { ...(zui as JsonObject), index: typeof zui.index === 'number' ? zui.index : index } }
  })
  let size = 0
  try { size = JSON.stringify(out).length } catch { throw errors.invalidPayload('schema is not JSON') }
  if (size > 200_000) throw errors.invalidPayload('schema is too large (200,000 characters at most)')
  return { type: 'object', properties: out, additionalProperties: true, required: required as string[] }
}

/** The columns of a normalised schema. */
export function columnsOf(schema: JsonObject): Map<string, Column> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
  const required = new Set((schema.required ?? []) as string[])
  const cols = new Map<string, Column>()
  for (const [name, p] of Object.entries(props)) {
    const zui = (p['x-zui'] ?? {}) as Record<string, unknown>
    const nested = isObject(p.properties)
      ? Object.fromEntries(Object.entries(p.properties).map(([k, v]) => [k, (v as { type: JsonType }).type]))
      : undefined
    cols.set(name, {
      name,
      type: p.type as JsonType,
      nullable: p.nullable === true || !required.has(name),
      required: required.has(name),
      searchable: zui.searchable === true,
      enum: p.enum as string[] | undefined,
      pattern: typeof p.pattern === 'string' ? compiledPattern(p.pattern) : undefined,
      dateTime: p.format === 'date-time',
      itemsType: isObject(p.items) ? p.items.type as JsonType : undefined,
      properties: nested,
    })
  }
  return cols
}

function compiledPattern(pattern: string): LinearRegex | { refused: string } {
  try { return compileLinearRegex(pattern) } catch (err) { return { refused: (err as Error).message } }
}

export function jsonTypeOf(v: Json | undefined): JsonType | undefined {
  if (v === undefined) return undefined
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'object') return 'object'
  if (typeof v === 'number') return 'number'
  if (typeof v === 'boolean') return 'boolean'
  return 'string'
}

/** Why a value does not fit the column, or undefined when it does. */
export function columnProblem(col: Column, v: Json): string | undefined {
  if (v === null) return col.nullable || col.type === 'null' ? undefined : `column "${col.name}" is required and cannot be null`
  const t = jsonTypeOf(v)
  if (t !== col.type) return `column "${col.name}" must be of type ${col.type} (got ${t})`
  if (t === 'number' && !Number.isFinite(v)) return `column "${col.name}" must be a finite number`
  if (typeof v === 'string') {
    if (col.enum && !col.enum.includes(v)) return `column "${col.name}" must be one of ${col.enum.slice(0, 10).map((e) => JSON.stringify(e)).join(', ')}`
    if (col.pattern && 'refused' in col.pattern) return `column "${col.name}": its schema pattern is no longer accepted (${col.pattern.refused}); update the table's schema`
    if (col.pattern && !col.pattern.test(v)) return `column "${col.name}" does not match its pattern`
    if (col.dateTime && Number.isNaN(Date.parse(v))) return `column "${col.name}" must be an ISO 8601 date-time`
  }
  if (Array.isArray(v) && col.itemsType) {
    const bad = v.findIndex((item) => jsonTypeOf(item) !== col.itemsType)
    if (bad >= 0) return `column "${col.name}": item ${bad} must be of type ${col.itemsType}`
  }
  if (t === 'object' && col.properties) {
    for (const [k, type] of Object.entries(col.properties)) {
      const nested = (v as JsonObject)[k]
      if (nested !== undefined && nested !== null && jsonTypeOf(nested) !== type) return `column "${col.name}": property "${k}" must be of type ${type}`
    }
  }
  return undefined
}

const BUILT_IN = new Set(['id', 'createdAt', 'updatedAt', 'computed', 'stale', 'similarity'])

/**
 * A row's columns checked against the schema: unknown columns are dropped (with a warning, as Botpress
 * ignores them), built-in fields ignored. `base` is the stored row an update merges into. Throws a
 * message (string) for the first problem.
 */
export function checkRow(cols: Map<string, Column>, input: Record<string, unknown>, factor: number, base?: JsonObject): { data: JsonObject; warnings: string[]; bytes: number } {
  const data: JsonObject = { ...(base ?? {}) }
  const warnings: string[] = []
  for (const [k, v] of Object.entries(input)) {
    if (BUILT_IN.has(k)) continue
    const col = cols.get(k)
    if (!col) { warnings.push(`column "${k}" is not in the table's schema and was ignored`); continue }
    if (v === undefined) continue
    const problem = columnProblem(col, v as Json)
    if (problem) throw problem
    data[k] = v as Json
  }
  for (const col of cols.values()) {
    if (col.required && (data[col.name] === undefined || data[col.name] === null)) throw `column "${col.name}" is required`
  }
  const bytes = Buffer.byteLength(JSON.stringify(data))
  const limit = TABLE_LIMITS.rowBytesPerFactor * factor
  if (bytes > limit) throw `the row is ${bytes} bytes, above the table's limit of ${limit} bytes (4 KB × factor ${factor})`
  return { data, warnings, bytes }
}

/** The lower-cased text of the searchable string columns (null when the table has none). */
export function searchTextOf(cols: Map<string, Column>, data: JsonObject): string | null {
  const parts: string[] = []
  for (const col of cols.values()) {
    const v = data[col.name]
    if (col.searchable && typeof v === 'string') parts.push(v)
  }
  return parts.length === 0 ? null : parts.join('\n').toLowerCase()
}

/** Search terms: lower-cased words (letters and digits), at most 20, deduplicated. */
export function searchTerms(search: string): string[] {
  const words = search.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0 && w.length <= 100)
  return [...new Set(words)].slice(0, 20)
}
