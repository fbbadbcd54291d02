import { createHash, createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashSecret, hmacSha256, safeEqual } from '../../src/lib/crypto.js'

describe('hashSecret', () => {
  it('is the base64url SHA-256 of the secret', () => {
    expect(hashSecret('uk_abc')).toBe(createHash('sha256').update('uk_abc').digest('base64url'))
    expect(hashSecret('uk_abc')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(hashSecret('uk_abc')).toBe(hashSecret('uk_abc'))
    expect(hashSecret('uk_abc')).not.toBe(hashSecret('uk_abd'))
    expect(hashSecret('')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(hashSecret('😀')).toBe(createHash('sha256').update(Buffer.from('😀', 'utf8')).digest('base64url'))
  })
})

describe('safeEqual', () => {
  it('compares strings of any length without throwing', () => {
    expect(safeEqual('secret', 'secret')).toBe(true)
    expect(safeEqual('secret', 'secreT')).toBe(false)
    expect(safeEqual('secret', 'secret-but-longer')).toBe(false)
    expect(safeEqual('', '')).toBe(true)
    expect(safeEqual('', 'x')).toBe(false)
    expect(safeEqual('ü', 'u\u0308')).toBe(false)
  })
})

describe('hmacSha256', () => {
  it('matches node:crypto HMAC-SHA256', () => {
    const mac = hmacSha256('key', 'data')
    expect(mac).toBeInstanceOf(Buffer)
    expect(mac).toHaveLength(32)
    expect(mac.equals(createHmac('sha256', 'key').update('data').digest())).toBe(true)
    // RFC 4231 test case 2
    expect(hmacSha256('Jefe', 'what do ya want for nothing?').toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843')
  })
})
