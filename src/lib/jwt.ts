import { timingSafeEqual } from 'node:crypto'
import { hmacSha256 } from './crypto.js'

/** Upper bound on a user-key JWT: real ones are ~150 bytes; this stops CPU/memory abuse. */
const MAX_TOKEN_LENGTH = 4096

export type JwtResult = { ok: true; claims: Record<string, unknown> } | { ok: false; reason: string }

function decodeSegment(segment: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) throw new Error('not base64url')
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
}

export function looksLikeJwt(token: string): boolean {
  return token.length <= MAX_TOKEN_LENGTH && token.split('.').length === 3 && token.startsWith('eyJ')
}

/**
 * Verifies an HS256 JWT. The algorithm is pinned: `none`, RS256, ES256 and anything else are refused,
 * whatever the header says, so algorithm-confusion attacks have nothing to confuse.
 */
export function verifyHs256(token: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): JwtResult {
  if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'token too long' }
  const parts = token.split('.')
  if (parts.length !== 3) return { ok: false, reason: 'malformed token' }
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string]
  let header: unknown
  let claims: unknown
  try {
    header = decodeSegment(headerPart)
    claims = decodeSegment(payloadPart)
  } catch {
    return { ok: false, reason: 'malformed token' }
  }
  if (typeof header !== 'object' || header === null || (header as { alg?: unknown }).alg !== 'HS256') {
    return { ok: false, reason: 'unsupported algorithm' }
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(signaturePart)) return { ok: false, reason: 'bad signature' }
  const expected = hmacSha256(secret, `${headerPart}.${payloadPart}`)
  const given = Buffer.from(signaturePart, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad signature' }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return { ok: false, reason: 'bad claims' }
  const { exp, nbf } = claims as { exp?: unknown; nbf?: unknown }
  if (exp !== undefined && (typeof exp !== 'number' || exp <= nowSeconds)) return { ok: false, reason: 'token expired' }
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds + 60)) return { ok: false, reason: 'token not yet valid' }
  return { ok: true, claims: claims as Record<string, unknown> }
}

/** Mints an HS256 JWT; used by tests and tools, exactly as @botpress/chat does it client-side. */
export function signHs256(claims: Record<string, unknown>, secret: string, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }): string {
  const h = Buffer.from(JSON.stringify(header)).toString('base64url')
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url')
  return `${h}.${p}.${hmacSha256(secret, `${h}.${p}`).toString('base64url')}`
}
