import { describe, expect, it } from 'vitest'
import { ApiError } from '../../src/lib/errors.js'
import { decodeCursor, encodeCursor } from '../../src/store/cursor.js'

const raw = (text: string) => Buffer.from(text, 'utf8').toString('base64url')

function expectForged(token: string, shape: ('string' | 'number')[]) {
  let thrown: unknown
  try {
    decodeCursor(token, shape)
  } catch (err) {
    thrown = err
  }
  expect(thrown, `token ${JSON.stringify(token.slice(0, 60))} was accepted`).toBeInstanceOf(ApiError)
  expect((thrown as ApiError).type).toBe('InvalidQuery')
  expect((thrown as ApiError).status).toBe(400)
  expect((thrown as ApiError).message).toBe('nextToken is not a token returned by this list')
}

describe('encodeCursor / decodeCursor', () => {
  it('round-trips', () => {
    const cases: [(string | number)[], ('string' | 'number')[]][] = [
      [[42], ['number']],
      [[0], ['number']],
      [[-7], ['number']],
      [[Number.MAX_SAFE_INTEGER], ['number']],
      [[1_700_000_000_000, '0190f3a4-7b2c-7def-8123-456789abcdef'], ['number', 'string']],
      [[1, ''], ['number', 'string']],
      [[1, 'ünïcödé 😀 "quotes" \\ / +=?'], ['number', 'string']],
      [['a', 'b', 3], ['string', 'string', 'number']],
    ]
    for (const [parts, shape] of cases) {
      const token = encodeCursor(parts)
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(decodeCursor(token, shape)).toEqual(parts)
    }
  })

  it('produces opaque URL-safe tokens with no padding', () => {
    for (let i = 0; i < 50; i++) {
      const token = encodeCursor([i * 997, 'x'.repeat(i)])
      expect(token).not.toMatch(/[+/=]/)
    }
  })

  it('rejects tokens that are not base64url', () => {
    const good = encodeCursor([5])
    for (const bad of ['', ' ', `${good}=`, `${good}==`, `${good} `, `${good}\n`, 'a+b', 'a/b', 'a.b', 'a%3D', '🙂', `${good.slice(0, 2)}!${good.slice(2)}`]) {
      expectForged(bad, ['number'])
    }
  })

  it('rejects oversize tokens', () => {
    const long = encodeCursor([1, 'x'.repeat(600)])
    expect(long.length).toBeGreaterThan(512)
    expectForged(long, ['number', 'string'])
    expectForged('A'.repeat(513), ['number'])
    expectForged('A'.repeat(100_000), ['number'])
  })

  it('accepts tokens up to 512 characters', () => {
    let n = 300
    let token = encodeCursor([1, 'y'.repeat(n)])
    while (token.length < 512) token = encodeCursor([1, 'y'.repeat(++n)])
    while (token.length > 512) token = encodeCursor([1, 'y'.repeat(--n)])
    expect(token.length).toBeLessThanOrEqual(512)
    expect(decodeCursor(token, ['number', 'string'])).toEqual([1, 'y'.repeat(n)])
  })

  it('rejects payloads that are not JSON', () => {
    for (const text of ['not json', '[1,', '{', 'undefined', 'NaN', '[NaN]', "['a']", '[1] [2]']) {
      expectForged(raw(text), ['number'])
    }
    expectForged(Buffer.from([0xff, 0xfe, 0xfd]).toString('base64url'), ['number'])
  })

  it('rejects JSON that is not an array of the right length', () => {
    for (const text of ['{}', '{"0":1,"length":1}', 'null', '1', '"abc"', 'true', '[]', '[1,2]']) {
      expectForged(raw(text), ['number'])
    }
    expectForged(raw('[1]'), ['number', 'string'])
    expectForged(raw('[1,"a","b"]'), ['number', 'string'])
  })

  it('rejects parts of the wrong type', () => {
    expectForged(raw('["1"]'), ['number'])
    expectForged(raw('[1.5]'), ['number'])
    expectForged(raw('[1e300]'), ['number'])
    expectForged(raw('[9007199254740992]'), ['number'])
    expectForged(raw('[-9007199254740992]'), ['number'])
    expectForged(raw('[1e400]'), ['number'])
    expectForged(raw('[null]'), ['number'])
    expectForged(raw('[true]'), ['number'])
    expectForged(raw('[[1]]'), ['number'])
    expectForged(raw('[{"valueOf":1}]'), ['number'])
    expectForged(raw('[1, 2]'), ['number', 'string'])
    expectForged(raw('[1, null]'), ['number', 'string'])
    expectForged(raw('[1, ["a"]]'), ['number', 'string'])
    expectForged(raw('["a", 1]'), ['number', 'string'])
  })

  it('a token of one list shape is refused by a list of another shape', () => {
    expectForged(encodeCursor([1_700_000_000_000, 'id']), ['number'])
    expectForged(encodeCursor([12]), ['number', 'string'])
  })

  it('a genuine token with a flipped character is refused', () => {
    const token = encodeCursor([12])
    expect(token).toBe('WzEyXQ')
    expectForged('WzEyXq', ['number']) // "[12" followed by garbage
    expectForged('XzEyXQ', ['number'])
  })

  it('tolerates JSON whitespace in otherwise valid tokens', () => {
    expect(decodeCursor(raw(' [ 1 , "a" ] '), ['number', 'string'])).toEqual([1, 'a'])
    expect(decodeCursor(raw('[-0]'), ['number'])).toEqual([-0])
  })
})
