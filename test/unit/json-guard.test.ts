import { describe, expect, it } from 'vitest'
import { findJsonProblem, MAX_JSON_DEPTH } from '../../src/lib/json-guard.js'

/** `depth` nested containers: depth 1 is the root itself. */
function nestedObjects(depth: number, leaf: unknown = 'leaf'): unknown {
  let v: unknown = { leaf }
  for (let i = 1; i < depth; i++) v = { child: v }
  return v
}

function nestedArrays(depth: number, leaf: unknown = 'leaf'): unknown {
  let v: unknown = [leaf]
  for (let i = 1; i < depth; i++) v = [v]
  return v
}

function nestedMixed(depth: number, leaf: unknown = 'leaf'): unknown {
  let v: unknown = [leaf]
  for (let i = 1; i < depth; i++) v = i % 2 ? { k: v } : [0, v]
  return v
}

describe('findJsonProblem', () => {
  it('accepts ordinary documents and primitives', () => {
    for (const ok of [
      null, true, false, 0, -0, 1e308, '', 'text', [], {},
      { type: 'text', text: 'héllo 😀 中文', nested: { a: [1, 2, { b: null }] } },
      JSON.parse('{"a":{"b":[1,"x",{"c":true}]}}'),
      { prototype: 1, toString: 'x', valueOf: 2, hasOwnProperty: 3 },
      { 'emoji 🔑': '👨‍👩‍👧‍👦', '\ud83d\ude00': 'surrogate pair key is fine' },
      'line\u2028separator \t\n\r\u0001 control',
    ]) {
      expect(findJsonProblem(ok)).toBeUndefined()
    }
  })

  describe('depth', () => {
    it(`is limited to ${MAX_JSON_DEPTH} levels of objects`, () => {
      expect(MAX_JSON_DEPTH).toBe(64)
      expect(findJsonProblem(nestedObjects(MAX_JSON_DEPTH))).toBeUndefined()
      expect(findJsonProblem(nestedObjects(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper than 64 levels/)
    })

    it('is limited for arrays too', () => {
      expect(findJsonProblem(nestedArrays(MAX_JSON_DEPTH))).toBeUndefined()
      expect(findJsonProblem(nestedArrays(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper/)
      expect(findJsonProblem(nestedMixed(MAX_JSON_DEPTH))).toBeUndefined()
      expect(findJsonProblem(nestedMixed(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper/)
    })

    it('counts empty containers at the bottom', () => {
      let v: unknown = {}
      for (let i = 1; i < MAX_JSON_DEPTH; i++) v = [v]
      expect(findJsonProblem(v)).toBeUndefined()
      expect(findJsonProblem([v])).toMatch(/nested deeper/)
    })

    it('finds an over-deep branch next to shallow ones', () => {
      expect(findJsonProblem({ a: 1, b: [1, 2, 3], deep: nestedObjects(MAX_JSON_DEPTH) })).toMatch(/body\.deep(\.child)+ is nested deeper/)
      expect(findJsonProblem([1, 2, nestedArrays(MAX_JSON_DEPTH)])).toMatch(/^body\[2\](\[0\])+ is nested deeper/)
    })

    it('survives absurd depths without overflowing the stack', () => {
      // far beyond what JSON.stringify/structuredClone can handle
      expect(findJsonProblem(nestedArrays(200_000))).toMatch(/nested deeper/)
      expect(findJsonProblem(nestedObjects(200_000))).toMatch(/nested deeper/)
      // the parser itself builds such values from a small body
      const body = '['.repeat(5000) + ']'.repeat(5000)
      expect(findJsonProblem(JSON.parse(body))).toMatch(/nested deeper/)
    })
  })

  describe('forbidden keys', () => {
    it('refuses __proto__ and constructor as own keys, at any depth', () => {
      expect(findJsonProblem(JSON.parse('{"__proto__":{"polluted":true}}'))).toBe('body has the forbidden key "__proto__"')
      expect(findJsonProblem(JSON.parse('{"constructor":{"prototype":{}}}'))).toBe('body has the forbidden key "constructor"')
      expect(findJsonProblem(JSON.parse('{"a":{"b":{"__proto__":1}}}'))).toBe('body.a.b has the forbidden key "__proto__"')
      expect(findJsonProblem(JSON.parse('[1,[2,{"constructor":null}]]'))).toBe('body[1][1] has the forbidden key "constructor"')
      expect(findJsonProblem(JSON.parse('{"list":[{},{},{"x":[{"__proto__":[]}]}]}'))).toMatch(/forbidden key "__proto__"/)
    })

    it('does not mistake similar keys or values for forbidden keys', () => {
      expect(findJsonProblem({ proto: 1, __proto: 2, _proto_: 3, Constructor: 4, 'constructor ': 5 })).toBeUndefined()
      expect(findJsonProblem({ a: '__proto__', b: ['constructor'] })).toBeUndefined()
    })
  })

  describe('NUL characters', () => {
    it('are refused in strings at any position and depth', () => {
      expect(findJsonProblem('\u0000')).toBe('body contains a NUL character')
      expect(findJsonProblem({ text: 'a\u0000b' })).toBe('body.text contains a NUL character')
      expect(findJsonProblem({ a: [1, { b: ['ok', 'end\u0000'] }] })).toBe('body.a[1].b[1] contains a NUL character')
      expect(findJsonProblem(JSON.parse('{"t":"\\u0000"}'))).toMatch(/NUL/)
      expect(findJsonProblem(nestedArrays(MAX_JSON_DEPTH - 1, 'x\u0000'))).toMatch(/NUL/)
    })

    it('are refused in keys', () => {
      expect(findJsonProblem({ 'k\u0000': 1 })).toBe('a key of body contains a NUL character')
      expect(findJsonProblem({ a: { '\u0000': 1 } })).toBe('a key of body.a contains a NUL character')
      expect(findJsonProblem([[[{ ok: 1 }, { 'bad\u0000key': 'v' }]]])).toBe('a key of body[0][0][1] contains a NUL character')
    })

    it('other control characters are allowed', () => {
      expect(findJsonProblem({ t: '\u0001\u001f\u007f\u0080' })).toBeUndefined()
    })
  })

  describe('lone surrogates', () => {
    it('are refused in strings', () => {
      for (const bad of ['\ud800', '\udfff', 'a\ud83d', '\ude00b', '\ude00\ud83d', 'x\ud800y']) {
        expect(findJsonProblem(bad)).toBe('body contains a lone UTF-16 surrogate')
      }
      expect(findJsonProblem(JSON.parse('{"t":"\\ud800"}'))).toBe('body.t contains a lone UTF-16 surrogate')
    })

    it('are refused in keys', () => {
      expect(findJsonProblem({ '\ud800': 1 })).toBe('a key of body contains a lone UTF-16 surrogate')
      expect(findJsonProblem(JSON.parse('{"a":{"k\\udc00":1}}'))).toBe('a key of body.a contains a lone UTF-16 surrogate')
    })

    it('are refused deep inside arrays', () => {
      expect(findJsonProblem([1, [2, [3, ['\udbff']]]])).toBe('body[1][1][1][0] contains a lone UTF-16 surrogate')
      expect(findJsonProblem(nestedArrays(MAX_JSON_DEPTH, '\ud800'))).toMatch(/lone UTF-16 surrogate/)
      expect(findJsonProblem({ list: Array.from({ length: 1000 }, (_, i) => (i === 777 ? ['ok', { deep: ['\udc00'] }] : i)) })).toBe(
        'body.list[777][1].deep[0] contains a lone UTF-16 surrogate',
      )
    })

    it('well-formed surrogate pairs are fine', () => {
      expect(findJsonProblem({ '😀': '𝕏 𠜎 \ud83d\ude00' })).toBeUndefined()
    })
  })

  it('accepts finite numbers, booleans and null', () => {
    expect(findJsonProblem({ n: 1e308, m: -0, b: false, z: null })).toBeUndefined()
  })

  it('refuses numbers JSON cannot carry back (1e400 parses to Infinity)', () => {
    expect(findJsonProblem(JSON.parse('{"n":1e400}'))).toMatch(/body\.n is a number too large/)
    expect(findJsonProblem({ deep: [1, Number.NEGATIVE_INFINITY] })).toMatch(/body\.deep\[1\]/)
    expect(findJsonProblem({ n: Number.NaN })).toMatch(/body\.n/)
  })
})
