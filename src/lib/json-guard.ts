/**
 * Checks a parsed JSON body before anything else sees it (threats T6, T9, T10):
 * - nesting deeper than MAX_DEPTH: JSON.stringify/structuredClone fail past ~4000 levels, so a
 *   small body could otherwise become a 500 anywhere it is re-serialized;
 * - `__proto__` / `constructor` keys: prototype pollution in any later merge;
 * - numbers that overflow to Infinity (JSON cannot carry them back);
 * - NUL characters and lone surrogates: PostgreSQL refuses them, so SQLite and PostgreSQL would
 *   answer the same request differently.
 * Returns a message describing the first problem, or undefined when the value is acceptable.
 */
export const MAX_JSON_DEPTH = 64

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor'])

function badString(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character'
  if (!s.isWellFormed()) return 'contains a lone UTF-16 surrogate'
  return undefined
}

/** `at`: where `root` sits in the body, for a value checked on its own (an element of a body parsed in slices). */
export function findJsonProblem(root: unknown, at: { depth: number; path: string } = { depth: 1, path: 'body' }): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: root, ...at }]
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!
    if (typeof value === 'string') {
      const problem = badString(value)
      if (problem) return `${path} ${problem}`
      continue
    }
    if (typeof value === 'number') {
      // 1e400 parses to Infinity, which JSON cannot represent: it would be stored as null.
      if (!Number.isFinite(value)) return `${path} is a number too large to represent`
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    if (depth > MAX_JSON_DEPTH) return `${path} is nested deeper than ${MAX_JSON_DEPTH} levels`
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], depth: depth + 1, path: `${path}[${i}]` })
      continue
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) return `${path} has the forbidden key "${key}"`
      const problem = badString(key)
      if (problem) return `a key of ${path} ${problem}`
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, path: `${path}.${key}` })
    }
  }
  return undefined
}
