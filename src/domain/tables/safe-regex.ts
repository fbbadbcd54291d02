import { errors } from '../../lib/errors.js'
import { REGEXP_LIMITS } from '../../store/sqlite-regexp.js'

/**
 * `$regex` patterns (and schema `pattern`s) run on SQLite in JavaScript's backtracking engine, so only
 * patterns without exponential or high-polynomial backtracking are accepted, on both engines alike:
 * at most REGEXP_LIMITS.maxPattern characters; no backreferences, lookarounds or other `(?…)` groups
 * except `(?:`; a quantified group may contain neither a quantifier nor an alternation (no `(a+)+`,
 * `(a|aa)*`); at most two unbounded quantifiers (`*`, `+`, `{n,}`) and repetition counts up to 100.
 * The pattern must also compile in JavaScript (PostgreSQL's ARE accepts this subset too).
 */
export function checkSafeRegex(pattern: string, what = '$regex'): void {
  const refuse = (why: string) => { throw errors.invalidQuery(`${what} ${JSON.stringify(pattern.slice(0, 80))} refused: ${why}`) }
  if (pattern.length > REGEXP_LIMITS.maxPattern) refuse(`longer than ${REGEXP_LIMITS.maxPattern} characters`)
  try { new RegExp(pattern, 'u') } catch (err) { refuse(`not a valid regular expression (${(err as Error).message})`) }
  // Per open group: whether it holds a quantifier or an alternation.
  const stack: { risky: boolean }[] = [{ risky: false }]
  let unbounded = 0
  let lastWasGroupEnd: { risky: boolean } | null = null
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    let closed: { risky: boolean } | null = null
    if (c === '\\') {
      const n = pattern[i + 1] ?? ''
      if (/[1-9]/.test(n) || n === 'k') refuse('backreferences are not supported')
      i++
    } else if (c === '[') {
      // Skip a character class (escapes inside it included).
      i++
      if (pattern[i] === '^') i++
      if (pattern[i] === ']') i++
      while (i < pattern.length && pattern[i] !== ']') { if (pattern[i] === '\\') i++; i++ }
    } else if (c === '(') {
      if (pattern[i + 1] === '?') {
        if (pattern[i + 2] !== ':') refuse('lookarounds and named or flagged groups are not supported (only (?: ))')
        i += 2
      }
      stack.push({ risky: false })
    } else if (c === ')') {
      closed = stack.pop() ?? refuse('unbalanced parenthesis')
      if (closed.risky) stack[stack.length - 1]!.risky = true
    } else if (c === '|') {
      stack[stack.length - 1]!.risky = true
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      let isUnbounded = c === '*' || c === '+'
      if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
        if (m) {
          const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3])
          if (Number(m[1]) > 100 || (max !== Infinity && max > 100)) refuse('repetition counts above 100 are not supported')
          if (max === Infinity) isUnbounded = true
          i += m[0].length - 1
        }
      }
      if (isUnbounded && ++unbounded > 2) refuse('more than two unbounded quantifiers (*, +, {n,})')
      if (lastWasGroupEnd?.risky) refuse('nested quantifiers (a quantified group containing a quantifier or an alternation)')
      stack[stack.length - 1]!.risky = true
      if (pattern[i + 1] === '?') i++
    }
    lastWasGroupEnd = closed
  }
}
