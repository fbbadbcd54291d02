import { errors } from '../../lib/errors.js'
import { COLUMN_NAME, type FieldRef, type RowCondition, type Scalar } from '../../store/table-store.js'
import { checkSafeRegex } from './safe-regex.js'
import type { Column } from './table-schema.js'

/** Bounds of a filter: nesting of $and/$or/$not, conditions in all, values of one $in/$nin, a string value. */
export const FILTER_LIMITS = { maxDepth: 8, maxNodes: 200, maxIn: 1000, maxString: 4096, maxPath: 5 } as const

const FIELD_OPS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$regex', '$options', '$not'])
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface FilterContext {
  columns: Map<string, Column>
  keyColumn: string | null
  /** Columns with an index of their own (TableStore.syncIndexes). */
  indexed?: Set<string> | undefined
}

/**
 * The client's mongo-like filter as a RowCondition, checked against the table's schema: columns must
 * exist, operators be known, values be scalars of a sensible type, the size within FILTER_LIMITS.
 * 400 InvalidQuery with the reason otherwise. Semantics (mirrored by the tests' reference evaluation):
 * a comparison matches only values of the operand's JSON type; `$ne`/`$nin` also match missing values;
 * `{ col: null }` matches null or missing; `$exists: true` matches any present value, null included.
 */
export function parseFilter(filter: unknown, ctx: FilterContext): RowCondition {
  let nodes = 0
  const count = () => {
    if (++nodes > FILTER_LIMITS.maxNodes) throw errors.invalidQuery(`filter has more than ${FILTER_LIMITS.maxNodes} conditions`)
  }

  const field = (path: string): FieldRef => {
    if (path === 'id') return { kind: 'id' }
    if (path === 'createdAt') return { kind: 'createdAt' }
    if (path === 'updatedAt') return { kind: 'updatedAt' }
    const segments = path.split('.')
    if (segments.length > FILTER_LIMITS.maxPath) throw errors.invalidQuery(`filter path "${path.slice(0, 100)}" is deeper than ${FILTER_LIMITS.maxPath}`)
    const col = ctx.columns.get(segments[0]!)
    if (!col) throw errors.invalidQuery(`filter: unknown column ${JSON.stringify(segments[0]!.slice(0, 100))}`)
    for (const s of segments) if (!COLUMN_NAME.test(s)) throw errors.invalidQuery(`filter: invalid path segment ${JSON.stringify(s.slice(0, 100))}`)
    if (segments.length > 1 && col.type !== 'object') throw errors.invalidQuery(`filter: column "${col.name}" is not an object; "${path}" has no value`)
    const type = segments.length === 1 ? col.type : segments.length === 2 ? col.properties?.[segments[1]!] : undefined
    return { kind: 'json', path: segments, type, isKey: segments.length === 1 && ctx.keyColumn === col.name, indexed: segments.length === 1 && (ctx.indexed?.has(col.name) ?? false) }
  }

  const scalar = (v: unknown, f: FieldRef, op: string): Scalar => {
    if (v === null || typeof v === 'boolean') return v
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw errors.invalidQuery(`filter: ${op} needs a finite number`)
      return v
    }
    if (typeof v === 'string') {
      if (v.length > FILTER_LIMITS.maxString) throw errors.invalidQuery(`filter: a string value is longer than ${FILTER_LIMITS.maxString} characters`)
      if (f.kind === 'createdAt' || f.kind === 'updatedAt') {
        const ms = Date.parse(v)
        if (Number.isNaN(ms)) throw errors.invalidQuery(`filter: ${f.kind} must be compared with an ISO 8601 date`)
        return ms
      }
      return v
    }
    throw errors.invalidQuery(`filter: ${op} takes a string, number, boolean or null (objects and arrays are not comparable)`)
  }

  const eq = (f: FieldRef, v: Scalar): RowCondition => (v === null ? { op: 'isNull', field: f } : { op: 'eq', field: f, value: v })

  const fieldCondition = (f: FieldRef, spec: unknown, depth: number): RowCondition => {
    count()
    if (!isObject(spec)) return eq(f, scalar(spec, f, '$eq'))
    const keys = Object.keys(spec)
    if (keys.length === 0) throw errors.invalidQuery('filter: empty operator object')
    const bad = keys.find((k) => !FIELD_OPS.has(k))
    if (bad !== undefined) throw errors.invalidQuery(`filter: unknown operator ${JSON.stringify(bad.slice(0, 100))} (supported: ${[...FIELD_OPS].join(' ')})`)
    const items: RowCondition[] = []
    for (const op of keys) {
      const v = spec[op]
      switch (op) {
        case '$eq': items.push(eq(f, scalar(v, f, op))); break
        case '$ne': items.push({ op: 'not', item: eq(f, scalar(v, f, op)) }); break
        case '$gt': case '$gte': case '$lt': case '$lte': {
          const s = scalar(v, f, op)
          if (typeof s !== 'number' && typeof s !== 'string') throw errors.invalidQuery(`filter: ${op} takes a number, a string or a date`)
          items.push({ op: op.slice(1) as 'gt', field: f, value: s })
          break
        }
        case '$in': case '$nin': {
          if (!Array.isArray(v)) throw errors.invalidQuery(`filter: ${op} takes an array`)
          if (v.length > FILTER_LIMITS.maxIn) throw errors.invalidQuery(`filter: ${op} has more than ${FILTER_LIMITS.maxIn} values`)
          const c: RowCondition = { op: 'in', field: f, values: v.map((x) => scalar(x, f, op)) }
          items.push(op === '$in' ? c : { op: 'not', item: c })
          break
        }
        case '$exists':
          if (typeof v !== 'boolean') throw errors.invalidQuery('filter: $exists takes true or false')
          items.push(v ? { op: 'exists', field: f } : { op: 'not', item: { op: 'exists', field: f } })
          break
        case '$regex': {
          if (typeof v !== 'string') throw errors.invalidQuery('filter: $regex takes a string')
          if (f.kind !== 'json') throw errors.invalidQuery('filter: $regex applies to text columns')
          const options = spec.$options ?? ''
          if (typeof options !== 'string' || !/^i?$/.test(options)) throw errors.invalidQuery('filter: $options may only be "i" (case-insensitive)')
          checkSafeRegex(v, '$regex', options)
          items.push({ op: 'regex', field: f, pattern: v, flags: options })
          break
        }
        case '$options':
          if (spec.$regex === undefined) throw errors.invalidQuery('filter: $options needs $regex')
          break
        case '$not':
          if (depth >= FILTER_LIMITS.maxDepth) throw errors.invalidQuery(`filter is nested deeper than ${FILTER_LIMITS.maxDepth}`)
          if (!isObject(v)) throw errors.invalidQuery('filter: $not takes an operator object, e.g. { $not: { $gt: 5 } }')
          items.push({ op: 'not', item: fieldCondition(f, v, depth + 1) })
          break
      }
    }
    return items.length === 1 ? items[0]! : { op: 'and', items }
  }

  const node = (value: unknown, depth: number): RowCondition => {
    if (depth > FILTER_LIMITS.maxDepth) throw errors.invalidQuery(`filter is nested deeper than ${FILTER_LIMITS.maxDepth}`)
    if (!isObject(value)) throw errors.invalidQuery('filter must be an object')
    count()
    const items: RowCondition[] = []
    for (const [k, v] of Object.entries(value)) {
      if (k === '$and' || k === '$or') {
        if (!Array.isArray(v) || v.length === 0) throw errors.invalidQuery(`filter: ${k} takes a non-empty array of filters`)
        items.push({ op: k === '$and' ? 'and' : 'or', items: v.map((x) => node(x, depth + 1)) })
      } else if (k === '$not') {
        items.push({ op: 'not', item: node(v, depth + 1) })
      } else if (k.startsWith('$')) {
        throw errors.invalidQuery(`filter: unknown operator ${JSON.stringify(k.slice(0, 100))} at the top level (supported: $and $or $not)`)
      } else {
        items.push(fieldCondition(field(k), v, depth))
      }
    }
    return items.length === 1 ? items[0]! : { op: 'and', items }
  }

  if (filter === undefined) return { op: 'true' }
  return node(filter, 0)
}

/** A column or built-in to order or group by. */
export function parseField(path: string, ctx: FilterContext, what: string): FieldRef {
  if (path === 'id') return { kind: 'id' }
  if (path === 'createdAt') return { kind: 'createdAt' }
  if (path === 'updatedAt') return { kind: 'updatedAt' }
  const col = ctx.columns.get(path)
  if (!col) throw errors.invalidQuery(`${what}: unknown column ${JSON.stringify(path.slice(0, 100))}`)
  return { kind: 'json', path: [path], type: col.type, isKey: ctx.keyColumn === path }
}
