import type SqliteDatabase from 'better-sqlite3'

/** Longest pattern and longest input `parley_regexp` accepts (the domain's limits, checked again here). */
export const REGEXP_LIMITS = { maxPattern: 256, maxInput: 10_000 } as const

/**
 * SQLite has no REGEXP: `parley_regexp(pattern, flags, value)` is JavaScript's RegExp on a pattern the
 * domain has already checked to be free of backtracking blow-ups (src/domain/tables/safe-regex.ts: no
 * backreferences, lookarounds or nested quantifiers) and on at most REGEXP_LIMITS.maxInput characters of
 * the value. NULL (no match) for a NULL value or a pattern that fails the checks here.
 */
export function registerRegexp(sqlite: SqliteDatabase.Database): void {
  const cache = new Map<string, RegExp | null>()
  sqlite.function('parley_regexp', { deterministic: true }, (pattern: unknown, flags: unknown, value: unknown) => {
    if (typeof value !== 'string' || typeof pattern !== 'string' || typeof flags !== 'string') return null
    if (pattern.length > REGEXP_LIMITS.maxPattern || !/^[ims]*$/.test(flags)) return null
    const key = `${flags}/${pattern}`
    let re = cache.get(key)
    if (re === undefined) {
      try { re = new RegExp(pattern, flags + 'u') } catch { re = null }
      if (cache.size > 500) cache.clear()
      cache.set(key, re)
    }
    if (!re) return null
    return re.test(value.length > REGEXP_LIMITS.maxInput ? value.slice(0, REGEXP_LIMITS.maxInput) : value) ? 1 : 0
  })
}
