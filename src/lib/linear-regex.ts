import { RE2JS } from 're2js'

/**
 * User-supplied regular expressions (Tables `$regex` filters, column and state schema `pattern`s) never reach
 * JavaScript's backtracking RegExp: they are compiled by re2js, a port of RE2 whose matching is linear in the
 * input (no catastrophic backtracking, whatever the pattern). Accepted is the subset of RE2 syntax that
 * RE2, PostgreSQL's ARE (which serves `$regex` on PostgreSQL, see `toPostgresRegex`) and ECMAScript read alike:
 * literals and escaped punctuation, `.`, `[…]` classes, `\d \w \s` (ASCII) and their negations, `\b \B \A \z`,
 * `\n \t \r \f \v \xHH \x{H…}`, groups `( )` and `(?: )`, `|`, `* + ?` (and lazy forms), `{n}`, `{n,}`,
 * `{n,m}` up to LINEAR_REGEX_LIMITS.maxRepeat. Refused, with the reason: backreferences, lookarounds, named
 * groups and inline flags (RE2 cannot run the first two in linear time), `\p{…}` classes, POSIX `[[:name:]]`
 * classes, other escapes, an unescaped `{` that is not a repetition, longer than maxPattern characters, or a
 * program of more than maxProgram instructions.
 */
export const LINEAR_REGEX_LIMITS = {
  maxPattern: 256,
  maxRepeat: 100,
  /** Instructions of the compiled program: the work per input character is at most proportional to it. */
  maxProgram: 2000,
  /** Characters of a value a pattern is matched against (the rest is ignored). */
  maxInput: 10_000,
  /**
   * Work (see `regexWork`) one turn of the event loop may spend: about 0.3 s in the slowest case measured
   * (RE2's NFA on a 2,000-instruction program), far less when its DFA runs, as it does for most patterns.
   */
  maxWorkPerTurn: 200_000_000,
  /** Statement timeout of a PostgreSQL query with a regex condition (its engine runs `$regex` there). */
  postgresMs: 2000,
} as const

/** A pattern this module refused, and why (callers turn it into their 400). */
export class RegexRefused extends Error {}

export interface LinearRegex {
  /** Matches the first LINEAR_REGEX_LIMITS.maxInput characters of the value, charging the work meter. */
  test(value: string): boolean
  /** Instructions of the compiled program. */
  readonly size: number
}

const ASCII_CLASS: Record<string, string> = { d: '0-9', w: '0-9A-Za-z_', s: '\\t\\n\\f\\r ' }
const CONTROL = new Set(['n', 't', 'r', 'f', 'v'])
const isWordChar = (c: string) => /[0-9A-Za-z_]/.test(c)

/**
 * Checks the pattern against the accepted subset and returns it in PostgreSQL's ARE dialect with the same
 * meaning as in RE2: `.` → `[^\n]` (ARE's `.` matches a newline), `\d \w \s` → ASCII classes (ARE's follow
 * the locale), `\b \B` → `\y \Y`, `\z` → `\Z`, `\x…` → `\u…`/`\U…` (ARE's `\x` takes any number of digits).
 */
export function toPostgresRegex(pattern: string): string {
  const refuse = (why: string): never => { throw new RegexRefused(why) }
  if (pattern.length > LINEAR_REGEX_LIMITS.maxPattern) refuse(`longer than ${LINEAR_REGEX_LIMITS.maxPattern} characters`)
  let out = ''
  let i = 0
  const hexEscape = (): string => {
    // At pattern[i] === 'x' (after the backslash).
    const braced = /^x\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i))
    const plain = /^x([0-9A-Fa-f]{2})/.exec(pattern.slice(i))
    const m = braced ?? plain ?? refuse('\\x takes two hex digits or \\x{…}')
    const cp = parseInt(m[1]!, 16)
    if (cp > 0x10ffff) refuse(`\\x{${m[1]}} is not a Unicode code point`)
    i += m[0].length
    return cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`
  }
  const escape = (inClass: boolean): string => {
    i++ // the backslash
    const c = pattern[i] ?? refuse('a trailing backslash')
    if (c === 'x') return hexEscape()
    i++
    const lower = c.toLowerCase()
    if (lower in ASCII_CLASS) {
      if (!inClass) return c === lower ? `[${ASCII_CLASS[lower]}]` : `[^${ASCII_CLASS[lower]}]`
      if (c === lower) return ASCII_CLASS[lower]!
      refuse(`\\${c} inside [...] is not supported (write the negated class instead)`)
    }
    if (CONTROL.has(c)) return `\\${c}`
    if (!inClass && c === 'b') return '\\y'
    if (!inClass && c === 'B') return '\\Y'
    if (!inClass && c === 'A') return '\\A'
    if (!inClass && c === 'z') return '\\Z'
    if (/[1-9]/.test(c) || c === 'k') refuse('backreferences are not supported (RE2 matches in linear time and has none)')
    if (c === 'p' || c === 'P') refuse('Unicode classes \\p{…} are not supported')
    if (!isWordChar(c) && c.charCodeAt(0) < 128) return `\\${c}`
    return refuse(`the escape \\${c} is not supported`)
  }
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === '\\') {
      out += escape(false)
    } else if (c === '[') {
      out += '['
      i++
      if (pattern[i] === '^') { out += '^'; i++ }
      if (pattern[i] === ']') { out += '\\]'; i++ }
      for (;;) {
        const d = pattern[i] ?? refuse('an unterminated [ class')
        if (d === ']') { out += ']'; i++; break }
        if (d === '[' && /[:.=]/.test(pattern[i + 1] ?? '')) refuse('POSIX classes like [[:alpha:]] are not supported (list the characters, e.g. [A-Za-z])')
        if (d === '\\') { out += escape(true); continue }
        out += d
        i++
      }
    } else if (c === '(') {
      if (pattern[i + 1] === '?') {
        const kind = pattern[i + 2]
        if (kind === ':') { out += '(?:'; i += 3; continue }
        if (kind === '=' || kind === '!' || (kind === '<' && /[=!]/.test(pattern[i + 3] ?? ''))) refuse('lookarounds are not supported (RE2 matches in linear time and has none)')
        refuse('named groups and inline flags (?…) are not supported: use ( ) or (?: ), and $options for case')
      }
      out += '('
      i++
    } else if (c === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(pattern.slice(i)) ?? refuse('a literal { must be escaped as \\{')
      const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Number(m[1]) : Number(m[3])
      if (Number(m[1]) > LINEAR_REGEX_LIMITS.maxRepeat || max > LINEAR_REGEX_LIMITS.maxRepeat) refuse(`repetition counts above ${LINEAR_REGEX_LIMITS.maxRepeat} are not supported`)
      out += m[0]
      i += m[0].length
    } else if (c === '.') {
      out += '[^\\n]'
      i++
    } else {
      out += c
      i++
    }
  }
  return out
}

/**
 * Work done by user patterns in the current turn of the event loop, in instructions × characters (a bound on
 * what RE2's automata do). Synchronous callers (SQLite's REGEXP function runs inside one statement) check it
 * with `overBudget` and stop; asynchronous ones (row writes) yield when it is high. It resets on the next turn.
 */
export const regexWork = {
  spent: 0,
  resetScheduled: false,
  get overBudget(): boolean { return this.spent > LINEAR_REGEX_LIMITS.maxWorkPerTurn },
  charge(units: number): void {
    this.spent += units
    if (!this.resetScheduled) {
      this.resetScheduled = true
      setImmediate(() => { this.spent = 0; this.resetScheduled = false })
    }
  },
}

/** The pattern compiled by re2js after the subset check (RegexRefused with the reason otherwise); flags: '' or 'i'. */
export function compileLinearRegex(pattern: string, flags = ''): LinearRegex {
  toPostgresRegex(pattern)
  if (!/^i?$/.test(flags)) throw new RegexRefused('the only flag is i (case-insensitive)')
  let re: RE2JS
  try {
    re = RE2JS.compile(pattern, flags === 'i' ? RE2JS.CASE_INSENSITIVE : 0)
  } catch (err) {
    throw new RegexRefused(`not a valid regular expression (${(err as Error).message.replace(/^error parsing regexp: /, '')})`)
  }
  const size = (re.re2Input as unknown as { prog: { inst: unknown[] } }).prog.inst.length
  if (size > LINEAR_REGEX_LIMITS.maxProgram) throw new RegexRefused(`too complex: it compiles to ${size} steps, at most ${LINEAR_REGEX_LIMITS.maxProgram} (lower the repetition counts)`)
  return {
    size,
    test(value: string): boolean {
      const input = value.length > LINEAR_REGEX_LIMITS.maxInput ? value.slice(0, LINEAR_REGEX_LIMITS.maxInput) : value
      regexWork.charge((input.length + 1) * size)
      return re.test(input)
    },
  }
}
