import { createHmac } from 'node:crypto'
import { safeEqual } from './crypto.js'

/**
 * Parley's request signature, one format for what is signed in both directions: webhook requests
 * sent to Parley (README "Webhook integration") and the deliveries Parley sends to remote bots
 * (README "Bring a Botpress bot"). `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>`.
 */
export const SIGNATURE_HEADER = 'x-parley-signature'

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signatureHeader(secret: string, body: Uint8Array | string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${signatureDigest(secret, t, body)}`
}

export function signatureDigest(secret: string, t: number, body: Uint8Array | string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')
}

/** The header's timestamp and its v1 entries (several are allowed: secret rotation); undefined when malformed. */
export function parseSignature(header: string | undefined): { t: number; v1: string[] } | undefined {
  if (!header) return undefined
  let t: number | undefined
  const v1: string[] = []
  for (const part of header.split(',')) {
    const [k, v] = part.trim().split('=', 2) as [string, string | undefined]
    if (k === 't' && v && /^\d{1,12}$/.test(v)) t = Number(v)
    else if (k === 'v1' && v && /^[0-9a-f]{64}$/i.test(v)) v1.push(v.toLowerCase())
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 }
}

/** Whether `header` signs `body` with `secret`, with a timestamp within `toleranceSeconds` of `nowSeconds`. */
export function verifySignature(secret: string, header: string | undefined, body: Uint8Array | string, toleranceSeconds: number, nowSeconds = Date.now() / 1000): boolean {
  const parsed = parseSignature(header)
  if (!parsed || Math.abs(nowSeconds - parsed.t) > toleranceSeconds) return false
  const digest = signatureDigest(secret, parsed.t, body)
  return parsed.v1.some((v) => safeEqual(v, digest))
}
