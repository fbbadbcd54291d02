/**
 * Tables API test helpers: a reference evaluation of the filter language in plain TypeScript (what
 * findTableRows must return, by the semantics documented in src/domain/tables/filter.ts and the README),
 * and a unique table name.
 */
type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
export type Row = { id: number; createdAt: string; updatedAt: string; [k: string]: unknown }

let seq = 0
/** A fresh table name (names must end with "Table"). */
export const tableName = (prefix = 't') => `${prefix}${Date.now().toString(36)}${++seq}Table`

const get = (row: Row, path: string): unknown => {
  if (path === 'createdAt' || path === 'updatedAt') return Date.parse(row[path])
  let v: unknown = row
  for (const s of path.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined
    v = (v as Record<string, unknown>)[s]
  }
  return v
}
const operand = (path: string, v: unknown) => ((path === 'createdAt' || path === 'updatedAt') && typeof v === 'string' ? Date.parse(v) : v)
const sameType = (a: unknown, b: unknown) => typeof a === typeof b && a !== null && b !== null && !Array.isArray(a) && typeof a !== 'object'
const eq = (v: unknown, q: unknown) => (q === null ? v === undefined || v === null : sameType(v, q) && v === q)

function field(v: unknown, spec: unknown, path: string): boolean {
  if (typeof spec !== 'object' || spec === null) return eq(v, operand(path, spec))
  return Object.entries(spec as Record<string, unknown>).every(([op, q0]) => {
    const q = operand(path, q0)
    switch (op) {
      case '$eq': return eq(v, q)
      case '$ne': return !eq(v, q)
      case '$gt': return sameType(v, q) && (v as number) > (q as number)
      case '$gte': return sameType(v, q) && (v as number) >= (q as number)
      case '$lt': return sameType(v, q) && (v as number) < (q as number)
      case '$lte': return sameType(v, q) && (v as number) <= (q as number)
      case '$in': return (q0 as unknown[]).some((x) => eq(v, operand(path, x)))
      case '$nin': return !(q0 as unknown[]).some((x) => eq(v, operand(path, x)))
      case '$exists': return (v !== undefined) === q
      case '$regex': return typeof v === 'string' && new RegExp(q as string, ((spec as { $options?: string }).$options ?? '') + 'u').test(v)
      case '$options': return true
      case '$not': return !field(v, q0, path)
      default: throw new Error(`reference: unknown ${op}`)
    }
  })
}

/** Whether `row` matches `filter` (the reference evaluation). */
export function matches(row: Row, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([k, spec]) => {
    if (k === '$and') return (spec as Record<string, unknown>[]).every((f) => matches(row, f))
    if (k === '$or') return (spec as Record<string, unknown>[]).some((f) => matches(row, f))
    if (k === '$not') return !matches(row, spec as Record<string, unknown>)
    return field(get(row, k), spec, k)
  })
}
export type { Json }

/** Polls getTableJobs until the job has ended (completed or failed), at most `ms` (a bound, not a timing check). */
export async function waitForJob(client: { getTableJobs(x: { table: string }): Promise<{ jobs: { id: string; status: string }[] }> }, table: string, jobId: string, ms = 20_000) {
  const end = Date.now() + ms
  for (;;) {
    const job = (await client.getTableJobs({ table })).jobs.find((j) => j.id === jobId)
    if (job && (job.status === 'completed' || job.status === 'failed')) return job as typeof job & { outputFileId: string | null; error?: string; progress: number }
    if (Date.now() > end) throw new Error(`job ${jobId} still ${job?.status} after ${ms} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
