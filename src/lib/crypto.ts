import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

/** Secrets are high-entropy, so a fast hash is enough; only the digest is stored. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url')
}

/** Constant-time comparison on fixed-length digests (timingSafeEqual throws on unequal lengths). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest()
  const db = createHash('sha256').update(b).digest()
  return timingSafeEqual(da, db)
}

export function hmacSha256(key: string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest()
}
