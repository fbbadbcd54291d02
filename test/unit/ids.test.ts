import { afterEach, describe, expect, it, vi } from 'vitest'
import { randomSecret, requestId, uuidv7 } from '../../src/lib/ids.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const timestampOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16)

describe('uuidv7', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('has the RFC 9562 layout: version 7, variant 10', () => {
    for (let i = 0; i < 1000; i++) expect(uuidv7()).toMatch(UUID_V7)
  })

  it('embeds the current Unix time in milliseconds', () => {
    const before = Date.now()
    const id = uuidv7()
    const after = Date.now()
    // ids stay monotonic, so the embedded time may run slightly ahead under heavy generation
    expect(timestampOf(id)).toBeGreaterThanOrEqual(before)
    expect(timestampOf(id)).toBeLessThanOrEqual(after + 5)
  })

  it('is strictly increasing across many ids generated in the same milliseconds', () => {
    const ids = Array.from({ length: 50_000 }, () => uuidv7())
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i]! > ids[i - 1]!)) throw new Error(`not increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`)
    }
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('stays increasing when more than 4096 ids are made within one frozen millisecond', () => {
    const frozen = Date.now() + 10_000
    vi.spyOn(Date, 'now').mockReturnValue(frozen)
    const ids = Array.from({ length: 10_000 }, () => uuidv7())
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
    for (const id of ids) expect(id).toMatch(UUID_V7)
    expect(timestampOf(ids[0]!)).toBe(frozen)
    // the counter overflow borrows from the next milliseconds, never goes back
    expect(timestampOf(ids[ids.length - 1]!)).toBeGreaterThan(frozen)
    expect(timestampOf(ids[ids.length - 1]!)).toBeLessThanOrEqual(frozen + 3)
  })

  it('stays increasing when the clock goes backwards', () => {
    const start = Date.now() + 20_000
    const now = vi.spyOn(Date, 'now')
    now.mockReturnValue(start)
    const a = uuidv7()
    now.mockReturnValue(start - 60_000)
    const b = uuidv7()
    const c = uuidv7()
    now.mockReturnValue(start + 1)
    const d = uuidv7()
    expect(b > a).toBe(true)
    expect(c > b).toBe(true)
    expect(d > c).toBe(true)
    expect(timestampOf(b)).toBeGreaterThanOrEqual(start)
    for (const id of [a, b, c, d]) expect(id).toMatch(UUID_V7)
  })

  it('has random bits: ids of the same millisecond differ beyond the counter', () => {
    const tails = new Set(Array.from({ length: 1000 }, () => uuidv7().slice(19)))
    expect(tails.size).toBe(1000)
  })
})

describe('randomSecret', () => {
  it('is prefixed, URL-safe and 256 bits', () => {
    const s = randomSecret('uk')
    expect(s).toMatch(/^uk_[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(s.slice(3), 'base64url')).toHaveLength(32)
    expect(randomSecret('uk')).not.toBe(s)
  })
})

describe('uuidv7 randomness (pooled random bytes)', () => {
  it('random bits differ between ids, including across pool refills', () => {
    // 2,000 ids use 16,000 pooled bytes: several 4 KB refills
    const tails = Array.from({ length: 2000 }, () => uuidv7().slice(19).replace('-', ''))
    expect(new Set(tails).size).toBe(tails.length)
    // every hex digit shows up in the random part (not a constant or a zero-filled buffer)
    const digits = new Set(tails.join('').slice(4))
    expect(digits.size).toBe(16)
  })
})

describe('requestId', () => {
  it('is unique, prefixed req_ and URL-safe', () => {
    const ids = Array.from({ length: 10_000 }, () => requestId())
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^req_[0-9a-f]{10}[0-9a-z]{6,}$/)
  })
})
