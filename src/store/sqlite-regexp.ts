import type SqliteDatabase from 'better-sqlite3'
import { errors } from '../lib/errors.js'
import { compileLinearRegex, LINEAR_REGEX_LIMITS, regexWork, type LinearRegex } from '../lib/linear-regex.js'

/**
 * SQLite has no REGEXP: `parley_regexp(pattern, flags, value)` matches with RE2 (src/lib/linear-regex.ts:
 * linear in the value, never JavaScript's backtracking RegExp) on at most LINEAR_REGEX_LIMITS.maxInput
 * characters of the value. A statement runs synchronously, on the event loop: once the turn's regex work
 * passes LINEAR_REGEX_LIMITS.maxWorkPerTurn the statement stops with 400 InvalidQuery. NULL (no match) for a
 * NULL value or a pattern the domain would have refused.
 */
export function registerRegexp(sqlite: SqliteDatabase.Database): void {
  const cache = new Map<string, LinearRegex | null>()
  sqlite.function('parley_regexp', { deterministic: true }, (pattern: unknown, flags: unknown, value: unknown) => {
    if (typeof value !== 'string' || typeof pattern !== 'string' || typeof flags !== 'string') return null
    const key = `${flags}/${pattern}`
    let re = cache.get(key)
    if (re === undefined) {
      try { re = compileLinearRegex(pattern, flags) } catch { re = null }
      if (cache.size > 500) cache.clear()
      cache.set(key, re)
    }
    if (!re) return null
    if (regexWork.overBudget) {
      throw errors.invalidQuery(`$regex: the filter needs more regular-expression work than one request may do (${LINEAR_REGEX_LIMITS.maxWorkPerTurn.toLocaleString('en')} steps × characters); add a narrower condition, or shorten the pattern`)
    }
    return re.test(value) ? 1 : 0
  })
}
