import { errors } from '../../lib/errors.js'
import { compileLinearRegex, RegexRefused, type LinearRegex } from '../../lib/linear-regex.js'

/**
 * A user pattern (`$regex`, a column's schema `pattern`) compiled by the linear-time engine
 * (src/lib/linear-regex.ts, on both store engines alike), or 400 InvalidQuery (`what` names it in the
 * message) saying why it is refused.
 */
export function checkSafeRegex(pattern: string, what = '$regex', flags = ''): LinearRegex {
  try {
    return compileLinearRegex(pattern, flags)
  } catch (err) {
    if (!(err instanceof RegexRefused)) throw err
    throw errors.invalidQuery(`${what} ${JSON.stringify(pattern.slice(0, 80))} refused: ${err.message}`)
  }
}
