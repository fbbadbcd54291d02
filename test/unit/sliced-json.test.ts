/**
 * parseJsonInSlices (src/lib/sliced-json.ts): a large body is parsed with turns of the event loop between slices,
 * and gives what JSON.parse gives: the same value for every generated body, a refusal for every text JSON.parse
 * refuses (mutated bodies), and the guard's refusals (depth, forbidden keys, NUL) inside the arrays.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { findJsonProblem } from '../../src/lib/json-guard.js'
import { parseJsonInSlices } from '../../src/lib/sliced-json.js'
import { turnsDuring } from '../helpers/event-loop.js'

/**
 * Both parses' answers, compared as the body parser uses them: refused (malformed), refused by the guard (the value
 * then does not matter: the sliced parse stops at the first problem), or the same value.
 */
function expectSameAnswer(
  a: { value: unknown; problem: string | undefined } | 'refused',
  b: { value: unknown; problem: string | undefined } | 'refused',
): void {
  expect(b === 'refused').toBe(a === 'refused')
  if (a === 'refused' || b === 'refused') return
  expect(b.problem === undefined).toBe(a.problem === undefined)
  if (a.problem === undefined) expect(b.value).toEqual(a.value)
}

/** What the one-piece parse answers: the value and the guard's problem, or 'refused'. */
function whole(text: string): { value: unknown; problem: string | undefined } | 'refused' {
  try {
    const value = JSON.parse(text) as unknown
    return { value, problem: findJsonProblem(value) }
  } catch {
    return 'refused'
  }
}

async function sliced(text: string, sliceChars: number): Promise<{ value: unknown; problem: string | undefined } | 'refused'> {
  try {
    return await parseJsonInSlices(text, sliceChars)
  } catch {
    return 'refused'
  }
}

const body = fc.record({
  rows: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 12 }),
  table: fc.string(),
  more: fc.option(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 })),
  nested: fc.jsonValue({ maxDepth: 3 }),
}, { requiredKeys: ['rows'] })

describe('parseJsonInSlices', () => {
  it('gives the event loop a turn per slice of a large body', async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => ({ k: `k${i}`, s: 'x'.repeat(4000), n: i, a: [1, { b: '"]}' }] }))
    const text = JSON.stringify({ table: 't', rows })
    const { result: parsed, turns } = await turnsDuring(() => parseJsonInSlices(text, 1 << 20))
    expect(parsed).toEqual({ value: JSON.parse(text), problem: undefined })
    // 8 MB: 8 slices of the scan and 8 of the parse at least (one turn before the parse would be all of it before).
    expect(turns).toBeGreaterThanOrEqual(2 * Math.floor(text.length / (1 << 20)))
  })

  it('gives what JSON.parse gives, for generated bodies cut into small slices', async () => {
    await fc.assert(fc.asyncProperty(body, fc.integer({ min: 1, max: 64 }), async (value, sliceChars) => {
      const text = JSON.stringify(value, null, sliceChars % 3 === 0 ? 1 : undefined)
      expectSameAnswer(whole(text), await sliced(text, sliceChars))
    }), { numRuns: 300 })
  })

  it('refuses exactly what JSON.parse refuses, for mutated bodies', async () => {
    const mutated = fc.tuple(body, fc.nat(), fc.constantFrom(',', ']', '[', '}', '{', '"', ':', '\\', ' ', 'x', ''), fc.boolean()).map(([value, at, ch, replace]) => {
      const text = JSON.stringify(value)
      const i = at % (text.length + 1)
      return text.slice(0, i) + ch + text.slice(replace ? i + 1 : i)
    })
    await fc.assert(fc.asyncProperty(mutated, async (text) => {
      expectSameAnswer(whole(text), await sliced(text, 7))
    }), { numRuns: 500 })
  })

  it('finds the guard\'s problems inside the arrays, with their path, and in the object around them', async () => {
    expect((await parseJsonInSlices('{"rows":[{"a":1},{"__proto__":{"x":1}}]}', 4)).problem).toBe('body.rows[1] has the forbidden key "__proto__"')
    expect((await parseJsonInSlices('{"rows":[1,"a\\u0000b"]}', 4)).problem).toBe('body.rows[1] contains a NUL character')
    const deep = `{"rows":[${'['.repeat(70)}${']'.repeat(70)}]}`
    expect((await parseJsonInSlices(deep, 4)).problem).toMatch(/nested deeper than 64 levels/)
    expect((await parseJsonInSlices('{"__proto__":[1,2],"rows":[1]}', 4)).problem).toBe('body has the forbidden key "__proto__"')
    expect(Object.getPrototypeOf((await parseJsonInSlices('{"rows":[1]}', 4)).value)).toBe(Object.prototype)
  })

  it('refuses malformed text as malformed even when the guard would refuse something else in it (found by fast-check)', async () => {
    const text = '{"rows":[],"more":[{"",:1}],"nested":{"__proto__":false}}'
    expect(whole(text)).toBe('refused')
    await expect(parseJsonInSlices(text, 4)).rejects.toThrow(SyntaxError)
  })

  it('leaves repeated keys, empty elements and what is not an object to JSON.parse\'s rules', async () => {
    expect((await parseJsonInSlices('{"rows":[1],"rows":[2,3]}', 2)).value).toEqual({ rows: [2, 3] })
    await expect(parseJsonInSlices('{"rows":[1,]}', 2)).rejects.toThrow(SyntaxError)
    await expect(parseJsonInSlices('{"rows":[,1]}', 2)).rejects.toThrow(SyntaxError)
    await expect(parseJsonInSlices('{"rows":[1]} x', 2)).rejects.toThrow(SyntaxError)
    expect((await parseJsonInSlices('[1,2,3]', 2)).value).toEqual([1, 2, 3])
    expect((await parseJsonInSlices('{"rows":[ ],"a":"[\\"]"}', 2)).value).toEqual({ rows: [], a: '["]' })
  })
})
