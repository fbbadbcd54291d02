import { createHmac, generateKeyPairSync, createSign } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { looksLikeJwt, signHs256, verifyHs256 } from '../../src/lib/jwt.js'

const SECRET = 'integration-encryption-key-0123456789'
const NOW = 1_700_000_000

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const hmac = (alg: 'sha256' | 'sha512', key: string, data: string) => createHmac(alg, key).update(data).digest('base64url')

/** Builds a token from raw parts, signing `header.payload` with HMAC-SHA256 unless told otherwise. */
function token(header: unknown, claims: unknown, sign: (data: string) => string = (d) => hmac('sha256', SECRET, d)): string {
  const data = `${b64url(header)}.${b64url(claims)}`
  return `${data}.${sign(data)}`
}

const reason = (t: string, secret = SECRET, now = NOW) => {
  const r = verifyHs256(t, secret, now)
  return r.ok ? 'ok' : r.reason
}

describe('signHs256 / verifyHs256', () => {
  it('round-trips claims', () => {
    const claims = { id: 'user-1', name: 'Zoë 😀', n: 1, nested: { a: [1, 2] } }
    const t = signHs256(claims, SECRET)
    expect(t.split('.')).toHaveLength(3)
    expect(t.startsWith('eyJ')).toBe(true)
    expect(JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(verifyHs256(t, SECRET, NOW)).toEqual({ ok: true, claims })
  })

  it('matches an independently computed HS256 signature (RFC 7515 style)', () => {
    const t = token({ alg: 'HS256', typ: 'JWT' }, { id: 'x' })
    expect(signHs256({ id: 'x' }, SECRET)).toBe(t)
    expect(reason(t)).toBe('ok')
  })

  it('accepts a token without typ and with extra header fields', () => {
    expect(reason(token({ alg: 'HS256' }, { id: 'x' }))).toBe('ok')
    expect(reason(token({ alg: 'HS256', kid: 'k1', typ: 'JWT' }, { id: 'x' }))).toBe('ok')
  })

  it('uses the current time by default', () => {
    const now = Math.floor(Date.now() / 1000)
    expect(verifyHs256(signHs256({ exp: now + 60 }, SECRET), SECRET).ok).toBe(true)
    expect(verifyHs256(signHs256({ exp: now - 60 }, SECRET), SECRET).ok).toBe(false)
  })

  describe('algorithm pinning', () => {
    it('refuses alg none, with or without a signature', () => {
      expect(reason(token({ alg: 'none', typ: 'JWT' }, { id: 'x' }, () => ''))).toBe('unsupported algorithm')
      expect(reason(token({ alg: 'none' }, { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token({ alg: 'None' }, { id: 'x' }, () => ''))).toBe('unsupported algorithm')
      expect(reason(token({ alg: 'NONE' }, { id: 'x' }, () => ''))).toBe('unsupported algorithm')
      expect(reason(`${b64url({ alg: 'none' })}.${b64url({ id: 'x' })}.`)).toBe('unsupported algorithm')
    })

    it('refuses HS512 even when correctly signed with the secret', () => {
      expect(reason(token({ alg: 'HS512', typ: 'JWT' }, { id: 'x' }, (d) => hmac('sha512', SECRET, d)))).toBe('unsupported algorithm')
      // an HS256 signature under an HS512 header is refused as well
      expect(reason(token({ alg: 'HS512', typ: 'JWT' }, { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token({ alg: 'HS384' }, { id: 'x' }))).toBe('unsupported algorithm')
    })

    it('refuses RS256 / ES256 headers (no key confusion)', () => {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
      const rs = token({ alg: 'RS256', typ: 'JWT' }, { id: 'x' }, (d) => createSign('RSA-SHA256').update(d).sign(privateKey).toString('base64url'))
      expect(reason(rs)).toBe('unsupported algorithm')
      // classic confusion: HMAC keyed with the public key PEM, header claims RS256
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
      expect(reason(token({ alg: 'RS256' }, { id: 'x' }, (d) => hmac('sha256', pem, d)), pem)).toBe('unsupported algorithm')
      expect(reason(token({ alg: 'ES256' }, { id: 'x' }))).toBe('unsupported algorithm')
    })

    it('refuses a missing, lowercase, or non-string alg, and non-object headers', () => {
      expect(reason(token({ typ: 'JWT' }, { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token({ alg: 'hs256' }, { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token({ alg: ['HS256'] }, { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token({ alg: null }, { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token(['HS256'], { id: 'x' }))).toBe('unsupported algorithm')
      expect(reason(token('HS256', { id: 'x' }))).not.toBe('ok')
      expect(reason(token(null, { id: 'x' }))).toBe('unsupported algorithm')
    })
  })

  describe('signature', () => {
    it('refuses a token signed with another key', () => {
      expect(reason(signHs256({ id: 'x' }, 'another-secret-entirely'))).toBe('bad signature')
      expect(reason(signHs256({ id: 'x' }, SECRET + ' '))).toBe('bad signature')
      expect(reason(signHs256({ id: 'x' }, ''))).toBe('bad signature')
    })

    it('refuses a tampered payload, header or signature', () => {
      const t = signHs256({ id: 'alice', admin: false }, SECRET)
      const [h, p, s] = t.split('.') as [string, string, string]
      expect(reason(`${h}.${b64url({ id: 'mallory', admin: false })}.${s}`)).toBe('bad signature')
      expect(reason(`${h}.${b64url({ id: 'alice', admin: true })}.${s}`)).toBe('bad signature')
      expect(reason(`${b64url({ alg: 'HS256', typ: 'JWT', kid: 'x' })}.${p}.${s}`)).toBe('bad signature')
      const flippedSig = (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
      expect(reason(`${h}.${p}.${flippedSig}`)).toBe('bad signature')
      // signature of another token
      const other = signHs256({ id: 'bob' }, SECRET).split('.')[2]!
      expect(reason(`${h}.${p}.${other}`)).toBe('bad signature')
    })

    it('refuses truncated, padded, extended or empty signatures', () => {
      const t = signHs256({ id: 'x' }, SECRET)
      const [h, p, s] = t.split('.') as [string, string, string]
      expect(s).toHaveLength(43)
      expect(reason(`${h}.${p}.${s.slice(0, -1)}`)).toBe('bad signature')
      expect(reason(`${h}.${p}.${s}=`)).toBe('bad signature')
      expect(reason(`${h}.${p}.${s}A`)).toBe('bad signature')
      expect(reason(`${h}.${p}.`)).toBe('bad signature')
      expect(reason(`${h}.${p}.${Buffer.from(s, 'base64url').toString('base64')}`)).not.toBe('ok')
      expect(reason(`${h}.${p}.${Buffer.from(s, 'base64url').toString('hex')}`)).toBe('bad signature')
    })
  })

  describe('time claims', () => {
    it('exp: must be a number in the future', () => {
      expect(reason(signHs256({ exp: NOW + 1 }, SECRET))).toBe('ok')
      expect(reason(signHs256({ exp: NOW }, SECRET))).toBe('token expired')
      expect(reason(signHs256({ exp: NOW - 1 }, SECRET))).toBe('token expired')
      expect(reason(signHs256({ exp: 0 }, SECRET))).toBe('token expired')
      expect(reason(signHs256({ exp: String(NOW + 1000) }, SECRET))).toBe('token expired')
      expect(reason(signHs256({ exp: null }, SECRET))).toBe('token expired')
      expect(reason(signHs256({ exp: true }, SECRET))).toBe('token expired')
      expect(reason(signHs256({ exp: 1e308 }, SECRET))).toBe('ok')
    })

    it('nbf: must be a number not later than now plus 60 s of clock skew', () => {
      expect(reason(signHs256({ nbf: NOW }, SECRET))).toBe('ok')
      expect(reason(signHs256({ nbf: NOW - 1000 }, SECRET))).toBe('ok')
      expect(reason(signHs256({ nbf: NOW + 60 }, SECRET))).toBe('ok')
      expect(reason(signHs256({ nbf: NOW + 61 }, SECRET))).toBe('token not yet valid')
      expect(reason(signHs256({ nbf: NOW + 86_400 }, SECRET))).toBe('token not yet valid')
      expect(reason(signHs256({ nbf: String(NOW) }, SECRET))).toBe('token not yet valid')
      expect(reason(signHs256({ nbf: null }, SECRET))).toBe('token not yet valid')
    })

    it('exp and nbf together', () => {
      expect(reason(signHs256({ nbf: NOW - 10, exp: NOW + 10 }, SECRET))).toBe('ok')
      expect(reason(signHs256({ nbf: NOW + 100, exp: NOW + 200 }, SECRET))).toBe('token not yet valid')
      expect(reason(signHs256({ nbf: NOW - 200, exp: NOW - 100 }, SECRET))).toBe('token expired')
    })

    it('checks time only after the signature (an unsigned exp proves nothing)', () => {
      expect(reason(signHs256({ exp: NOW - 1 }, 'wrong key'))).toBe('bad signature')
    })
  })

  describe('shape', () => {
    it('refuses oversize tokens before doing any work', () => {
      const big = signHs256({ id: 'x', pad: 'p'.repeat(5000) }, SECRET)
      expect(big.length).toBeGreaterThan(4096)
      expect(reason(big)).toBe('token too long')
      expect(reason('a'.repeat(4097))).toBe('token too long')
      expect(reason('.'.repeat(100_000))).toBe('token too long')
      expect(looksLikeJwt(big)).toBe(false)
    })

    it('accepts a token right at the size limit', () => {
      let pad = 2900
      let t = signHs256({ id: 'x', pad: 'p'.repeat(pad) }, SECRET)
      while (t.length < 4096) t = signHs256({ id: 'x', pad: 'p'.repeat(++pad) }, SECRET)
      while (t.length > 4096) t = signHs256({ id: 'x', pad: 'p'.repeat(--pad) }, SECRET)
      expect(t.length).toBeLessThanOrEqual(4096)
      expect(t.length).toBeGreaterThan(4090)
      expect(reason(t)).toBe('ok')
    })

    it('refuses a wrong number of segments', () => {
      const t = signHs256({ id: 'x' }, SECRET)
      expect(reason('')).toBe('malformed token')
      expect(reason('abc')).toBe('malformed token')
      expect(reason(t.split('.').slice(0, 2).join('.'))).toBe('malformed token')
      expect(reason(`${t}.`)).toBe('malformed token')
      expect(reason(`${t}.${t}`)).toBe('malformed token')
    })

    it('refuses segments that are not base64url', () => {
      const t = signHs256({ id: 'x' }, SECRET)
      const [h, p, s] = t.split('.') as [string, string, string]
      const std = (seg: string) => Buffer.from(seg, 'base64url').toString('base64') // may contain + / =
      expect(reason(`${h}=.${p}.${s}`)).toBe('malformed token')
      expect(reason(`${h}.${p}=.${s}`)).toBe('malformed token')
      expect(reason(`${h}.${p}==.${s}`)).toBe('malformed token')
      expect(reason(`${h} .${p}.${s}`)).toBe('malformed token')
      expect(reason(`${h}.${p}\n.${s}`)).toBe('malformed token')
      expect(reason(`${h}.${p.slice(0, 3)}+${p.slice(3)}.${s}`)).toBe('malformed token')
      expect(reason(`${h}.${p.slice(0, 3)}/${p.slice(3)}.${s}`)).toBe('malformed token')
      expect(reason(`${h}.${p.slice(0, 3)}%${p.slice(3)}.${s}`)).toBe('malformed token')
      // a standard-base64 payload that needs padding is refused
      const claims = { id: '>>>???' } // encodes with + and /
      const stdToken = `${h}.${std(b64url(claims))}.${s}`
      expect(std(b64url(claims))).toMatch(/[+/=]/)
      expect(reason(stdToken)).toBe('malformed token')
    })

    it('refuses segments that are not JSON', () => {
      const h = b64url({ alg: 'HS256' })
      expect(reason(`${b64url('not json')}.${b64url({})}.${'A'.repeat(43)}`)).toBe('malformed token')
      expect(reason(`${h}.${b64url('{"id":')}.${'A'.repeat(43)}`)).toBe('malformed token')
      expect(reason(`${h}.${Buffer.from([0xff, 0xfe, 0x00]).toString('base64url')}.${'A'.repeat(43)}`)).toBe('malformed token')
    })

    it('refuses validly signed claims that are not a JSON object', () => {
      for (const claims of [[1, 2], null, 'string', 42, true]) {
        expect(reason(token({ alg: 'HS256' }, JSON.stringify(claims)))).toBe('bad claims')
      }
    })
  })

  describe('looksLikeJwt', () => {
    it('recognises JWT-shaped keys only', () => {
      expect(looksLikeJwt(signHs256({ id: 'x' }, SECRET))).toBe(true)
      expect(looksLikeJwt('uk_abcdef')).toBe(false)
      expect(looksLikeJwt('eyJ.a')).toBe(false)
      expect(looksLikeJwt('abc.def.ghi')).toBe(false)
      expect(looksLikeJwt('eyJ.a.b.c')).toBe(false)
    })
  })
})
