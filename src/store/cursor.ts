import { errors } from '../lib/errors.js'

/**
 * Keyset cursors travel as opaque base64url JSON arrays. Decoding validates the shape, so a forged
 * or corrupted `nextToken` is a 400, never a query error.
 */
export function encodeCursor(parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url')
}

export function decodeCursor(token: string, shape: ('string' | 'number')[], maxLength = 512): (string | number)[] {
  const invalid = () => errors.invalidQuery('nextToken is not a token returned by this list')
  if (token.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid()
  let parts: unknown
  try {
    parts = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  if (!Array.isArray(parts) || parts.length !== shape.length) throw invalid()
  parts.forEach((part, i) => {
    // Strings must be storable by every engine (PostgreSQL refuses NUL and lone surrogates).
    const ok = shape[i] === 'number' ? Number.isSafeInteger(part) : typeof part === 'string' && !part.includes('\u0000') && part.isWellFormed()
    if (!ok) throw invalid()
  })
  return parts as (string | number)[]
}
