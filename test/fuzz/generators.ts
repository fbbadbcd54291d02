/**
 * fast-check generators for the OpenAPI fuzz suite (issue #13): values derived from an operation's
 * JSON schema, hostile strings, keys and values, mutations of valid bodies, raw (non-JSON, truncated,
 * non-UTF-8) bodies, path segments and query strings.
 *
 * Bodies are built as values that may hold `Raw` leaves (number literals JSON.stringify cannot write:
 * 1e400, -0, 30-digit integers) and own `__proto__` keys, then written by `toJsonText`.
 */
import fc from 'fast-check'

/** The subset of JSON Schema (as @fastify/swagger writes TypeBox schemas) the generators read. */
export interface Schema {
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  nullable?: boolean
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  items?: Schema
  minItems?: number
  maxItems?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  default?: unknown
}

/** A literal written verbatim into the JSON text. */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of a generated value: Raw leaves verbatim, own `__proto__` keys kept. */
export function toJsonText(value: unknown): string {
  if (value instanceof Raw) return value.text
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${toJsonText((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** Sets an own enumerable property, even one named `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

// ---------------------------------------------------------------------------------------------
// Hostile strings, keys and values

const SPECIAL_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', 'a\udc00b', '\udbff', '\u2028', '\u2029', 'a\nb', '\r\n', '\t',
  '..', '.', '../../../etc/passwd', '..\\..\\windows', '/', '//', '%00', '%2e%2e', '%2F', '%', '%zz', '\\',
  '<script>alert(1)</script>', "'; DROP TABLE bots; --", '" OR 1=1 --', '$where', '{"$gt":""}', '${7*7}', '{{7*7}}',
  '\u202e', '\u200b', '\ufeff', 'e\u0301', '𝕏', '👩‍👩‍👧‍👦', 'ﷺ', 'İ', 'ß', '\uffff', '\ufffe', '\u0085',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'undefined', 'NaN', 'true',
  '0', '-0', '1e400', 'Infinity', '9'.repeat(40), '0x10', ' 1', '1 ', '+1', '1.0',
  'x'.repeat(101), 'x'.repeat(257), 'x'.repeat(1025), 'x'.repeat(4097),
  '2026-13-45T25:61:61Z', '0000-00-00T00:00:00Z', '9999-12-31T23:59:59.999Z', '1970-01-01T00:00:00Z', '+275760-09-13T00:00:00.000Z',
  'a@b', '@', 'a@', '@b', 'a@b@c', 'owner@localhost', 'text/plain', 'application/json', '*/*',
]

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  // Lone surrogates and NULs inside otherwise ordinary text.
  { arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\ud800', '\udfff', '\u0000'), fc.string({ maxLength: 10 })).map((p) => p.join('')), weight: 2 },
  // Large: past every maxLength; 100 KB stays under the 1 MB body limits, 1.1 MB passes them.
  { arbitrary: fc.constantFrom(10_000, 100_000, 1_100_000).map((n) => 'é'.repeat(n / 2)), weight: 1 },
)

export const hostileKey: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', 'a\nb', 'a\u2028b', 'a\u2029b', 'a\u0000b', '\ud800', 'a.b', '$set', 'x'.repeat(10_000), 'id', 'type', 'payload'), weight: 3 },
    { arbitrary: hostileString.filter((s) => s.length < 2000), weight: 1 },
  )

const HOSTILE_NUMBERS = ['1e308', '-1e308', '1e400', '-1e400', '1e-400', '-0', '0.0', '123456789012345678901234567890', '9007199254740993', '-9007199254740993', '1.5', '-1', '2147483648', '4294967296', '1E2', '0e0']

/** A deeply nested value: `levels` objects or arrays. */
export function nested(levels: number, leaf: unknown = 1, array = false): unknown {
  let value = leaf
  for (let i = 0; i < levels; i++) value = array ? [value] : { a: value }
  return value
}

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_NUMBERS).map((n) => new Raw(n)),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE),
)

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, [], {}, [null], { '': null }), weight: 3 },
  { arbitrary: hostileNumber, weight: 3 },
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.array(hostileString, { maxLength: 4 }), weight: 1 },
  { arbitrary: fc.constantFrom(63, 64, 65, 200).chain((n) => fc.boolean().map((arr) => nested(n, 'x', arr))), weight: 1 },
  { arbitrary: fc.constantFrom(1000, 10_000).map((n) => Array.from({ length: n }, (_, i) => i)), weight: 1 },
)

// ---------------------------------------------------------------------------------------------
// Learned values: ids and page tokens the server returned during the run

/**
 * `~~L<n>~~` (an id) and `~~N<n>~~` (a nextToken) stand for the n-th value (modulo) the server returned
 * in an earlier 2xx response; the sender substitutes them (URL-encoded in paths and queries, escaped in
 * JSON). Unreserved characters only, so encodeURIComponent leaves them intact.
 */
export const learnedId: fc.Arbitrary<string> = fc.nat(10_000).map((n) => `~~L${n}~~`)
export const learnedToken: fc.Arbitrary<string> = fc.nat(10_000).map((n) => `~~N${n}~~`)

/** Page tokens of the right encoding (base64url JSON arrays) with values of every kind. */
export const forgedCursor: fc.Arbitrary<string> = fc
  .oneof(
    fc.tuple(fc.oneof(fc.maxSafeInteger(), fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER)), fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '\uffff', '\u0000', 'zzzz', '01'.repeat(100)))),
    fc.tuple(fc.maxSafeInteger()),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom<unknown>([1e308, 'x'], [1.5, 'x'], ['x', 1], [null, null], [], [[1], 'x'], ['2026-01-01', 'x'], [1, 2, 3], { 0: 1, 1: 'x' }),
  )
  .map((v) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url'))

/** Bot module texts: loadable, failing to load, and hostile shapes of hooks and workflows. */
export const botCode: fc.Arbitrary<string> = fc.constantFrom(
  '', 'export default {}', 'export const hooks = {}', 'export default 1', 'export default null', 'throw new Error("load")', 'export default {',
  'export const hooks = { afterIncoming: 1 }', 'export const hooks = null', 'export const actions = { a: 1 }',
  'export const workflows = { w: { trigger: { type: "message", pattern: "(" }, nodes: {} } }',
  'export const workflows = { w: { trigger: { type: "message", pattern: "a", flags: "zz" }, nodes: { n: { cards: [] } } } }',
  'export const workflows = { w: { trigger: { type: "nope" }, nodes: { n: { cards: [{ type: "say" }] } } } }',
  'export const workflows = { w: { trigger: null, nodes: null } }', 'export const workflows = { w: 1 }',
  'export const workflows = { w: { trigger: { type: "event", name: "webhook" }, start: "missing", nodes: { n: { cards: [{ type: "goto", node: "x" }] } } } }',
  'while (true) {}', 'const a = []; for (;;) a.push(new Array(1e6))', 'import fs from "fs"; export default {}', 'export default { hooks: { afterIncoming() { return this } } }',
  'export default new Proxy({}, { get() { throw new Error("trap") } })', 'export const hooks = new Proxy({}, { ownKeys() { throw 1 } })',
  '\u0000', 'x'.repeat(100_000),
)

/** Search text: full-text query syntax of SQLite FTS5 and PostgreSQL tsquery, quoted and not. */
export const searchText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('"', '""', '"a', 'a*', '*', 'NEAR(a b)', 'a NEAR b', 'a OR', 'OR', 'AND', 'NOT', '-a', '^a', 'a:b', 'col:x', '{a b}', '(', ')', '()', "'", "a'b", '&', '|', '!', '<->', 'a & !b', ':*', '\\', '%', '_', 'the', 'a b c d e f g h i j k l m n o p', 'wifi', 'ñ', '中文', '\u0301'),
  fc.string({ maxLength: 30 }),
  fc.array(fc.constantFrom('a', 'OR', '"', '*', '(', ')', 'NEAR', ':', '-', '^', 'wifi', 'router'), { maxLength: 8 }).map((w) => w.join(' ')),
)

// ---------------------------------------------------------------------------------------------
// Values of a schema's shape

export interface SchemaContext {
  /** Ids worth trying for string properties named like ids (`id`, `botId`, `conversationId`, …). */
  ids: fc.Arbitrary<string>
}

const isIdName = (name: string | undefined) => name !== undefined && (/(^id$|Id$|^key$|Key$)/.test(name))

function boundedString(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0
  const max = s.maxLength
  const arbs: fc.Arbitrary<string>[] = [fc.string({ minLength: Math.max(min, 1), maxLength: Math.max(min, Math.min(max ?? 24, 24)) })]
  if (max !== undefined) arbs.push(fc.constantFrom('x'.repeat(max), 'x'.repeat(max + 1)))
  if (min > 0) arbs.push(fc.constant('x'.repeat(min - 1)))
  arbs.push(fc.string({ unit: 'grapheme', minLength: Math.max(min, 1), maxLength: Math.max(min, Math.min(max ?? 12, 12)) }))
  return fc.oneof(...arbs)
}

function stringFor(s: Schema, ctx: SchemaContext, name?: string): fc.Arbitrary<string> {
  if (s.format === 'date-time') {
    return fc.oneof(
      fc.date({ min: new Date(0), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      // Leap seconds and lower-case separators pass the date-time format but not every date parser.
      fc.constantFrom('2026-13-45T25:61:61Z', 'yesterday', '', '1970-01-01', '+275760-09-13T00:00:00.000Z', '-000001-01-01T00:00:00Z', '2026-01-01T00:00:00+25:00',
        '2026-12-31T23:59:60Z', '2026-12-31T23:59:60.999+00:00', '2026-06-30T23:59:60-00:00', '2026-01-01t00:00:00z', '2026-01-01T00:00:00.123456789Z', '2026-02-29T00:00:00Z'),
    )
  }
  if (s.format === 'uri' || /url$/i.test(name ?? '')) {
    return fc.oneof(fc.webUrl(), fc.constantFrom('javascript:alert(1)', 'file:///etc/passwd', 'http://', 'x'), boundedString(s))
  }
  if (s.pattern?.includes('@')) return fc.oneof(fc.emailAddress(), fc.constantFrom('a@b', 'owner@localhost', 'a@b@c', 'a b@c', '@'))
  if (s.pattern !== undefined) {
    return fc.oneof(fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 200)), boundedString(s))
  }
  if (name === 'key') return fc.oneof(ctx.ids, learnedId, boundedString(s), hostileString.filter((k) => k.length > 0 && k.length < 1100))
  if (name === 'contentType') {
    return fc.oneof(boundedString(s), fc.constantFrom('text/plain', 'application/pdf', 'text/html', 'text/csv', 'application/json', 'text/markdown', 'image/png', 'text/plain; charset=latin1', 'text/plain; charset="a\\"b"', 'a/b; name=é', 'text/plain;;', 'x/y\r\nSet-Cookie: a=b', 'text/html; charset=utf-8; boundary=' + 'a'.repeat(200)))
  }
  if (isIdName(name)) return fc.oneof(ctx.ids, ctx.ids, learnedId, boundedString(s))
  if (name === 'code') return fc.oneof(botCode, botCode, boundedString(s))
  if (name === 'nextToken') return fc.oneof(learnedToken, learnedToken, forgedCursor, boundedString(s))
  if (name === 'query') return fc.oneof(searchText, searchText, boundedString(s))
  return boundedString(s)
}

/** An arbitrary value of the schema's shape (mostly valid; boundaries and near-misses included). */
export function valueFor(s: Schema, ctx: SchemaContext, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const arb = rawValueFor(s, ctx, name, depth)
  return s.nullable ? fc.option(arb, { nil: null, freq: 6 }) : arb
}

function rawValueFor(s: Schema, ctx: SchemaContext, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
  if (s.enum) return fc.constantFrom(...s.enum)
  if (s.const !== undefined) return fc.constant(s.const)
  const alternatives = s.anyOf ?? s.oneOf
  if (alternatives) return fc.oneof(...alternatives.map((alt) => valueFor({ ...s, anyOf: undefined, oneOf: undefined, discriminator: undefined, ...alt } as Schema, ctx, name, depth)))
  if (s.allOf) return valueFor(Object.assign({}, ...s.allOf) as Schema, ctx, name, depth)
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'string':
      return stringFor(s, ctx, name)
    case 'integer': {
      const min = s.minimum ?? -1000
      const max = s.maximum ?? 1_000_000
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max, min - 1, max + 1, 0))
    }
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true, min: s.minimum ?? -1e9, max: s.maximum ?? 1e9 }), fc.constantFrom(-90, 90, 180, -180, 0))
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      const item = s.items ? valueFor(s.items, ctx, name, depth + 1) : fc.jsonValue({ maxDepth: 1 })
      const arbs = [fc.array(item, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) })]
      if (s.maxItems !== undefined && s.maxItems <= 100) arbs.push(fc.array(item, { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 }))
      return fc.oneof({ arbitrary: arbs[0]!, weight: 4 }, ...arbs.slice(1).map((a) => ({ arbitrary: a, weight: 1 })))
    }
    case 'object':
    default:
      return objectFor(s, ctx, depth)
  }
}

function objectFor(s: Schema, ctx: SchemaContext, depth: number): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant({})
  const props = s.properties ?? {}
  const names = Object.keys(props)
  const required = new Set(s.required ?? [])
  const record = fc.record(
    Object.fromEntries(names.map((n) => [n, valueFor(props[n]!, ctx, n, depth + 1)])),
    { requiredKeys: names.filter((n) => required.has(n)) },
  ) as fc.Arbitrary<Record<string, unknown>>
  const extra =
    typeof s.additionalProperties === 'object'
      ? fc.dictionary(fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('a', 'env', 'chat', 'webhook')), valueFor(s.additionalProperties, ctx, undefined, depth + 1), { maxKeys: 3 })
      : names.length === 0 && s.additionalProperties !== false
        ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
        : fc.constant({})
  return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }))
}

// ---------------------------------------------------------------------------------------------
// Mutations

/** Every container node of a value (objects and arrays), root first. */
function containers(value: unknown, out: (Record<string, unknown> | unknown[])[] = []): (Record<string, unknown> | unknown[])[] {
  if (value instanceof Raw || value === null || typeof value !== 'object') return out
  out.push(value as Record<string, unknown>)
  for (const v of Object.values(value)) containers(v, out)
  return out
}

/** A structured clone that keeps Raw leaves and own `__proto__` keys. */
function clone(value: unknown): unknown {
  if (value instanceof Raw || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(clone)
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(value)) setOwn(out, k, clone((value as Record<string, unknown>)[k]))
  return out
}

type Mutation = { kind: 'replace' | 'add' | 'delete' | 'wrap'; at: number; pick: number; key: string; value: unknown }

function applyMutation(original: unknown, m: Mutation): unknown {
  const value = clone(original)
  const nodes = containers(value)
  if (nodes.length === 0) return m.kind === 'wrap' ? [value] : m.value
  const node = nodes[m.at % nodes.length]!
  const keys = Array.isArray(node) ? node.map((_, i) => String(i)) : Object.keys(node)
  const key = keys.length > 0 ? keys[m.pick % keys.length]! : undefined
  const set = (k: string, v: unknown) => (Array.isArray(node) ? (node[Number(k)] = v) : setOwn(node, k, v))
  switch (m.kind) {
    case 'replace':
      if (key !== undefined) set(key, m.value)
      else if (!Array.isArray(node)) setOwn(node, m.key, m.value)
      break
    case 'add':
      if (Array.isArray(node)) node.push(m.value)
      else setOwn(node, m.key, m.value)
      break
    case 'delete':
      if (key !== undefined) {
        if (Array.isArray(node)) node.splice(Number(key), 1)
        else delete node[key]
      }
      break
    case 'wrap':
      if (key !== undefined) set(key, nested(3, Array.isArray(node) ? node[Number(key)] : node[key], m.pick % 2 === 0))
      break
  }
  return value
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'add', 'delete', 'wrap'),
  at: fc.nat(),
  pick: fc.nat(),
  key: hostileKey,
  value: hostileValue,
})

/** A value of the schema's shape with 0–3 mutations (wrong types, extra keys, missing keys, nesting). */
export function mutatedValueFor(s: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  return fc.tuple(valueFor(s, ctx), fc.array(mutation, { maxLength: 3 })).map(([value, mutations]) => mutations.reduce(applyMutation, value))
}

// ---------------------------------------------------------------------------------------------
// Request bodies

export interface BodySpec {
  /** Body bytes, or undefined for no body. */
  bytes: Buffer | undefined
  /** Content-Type header, or null for none. */
  contentType: string | null
  label: string
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8']
const OTHER_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream',
  'application/json; charset=latin1', 'application/json, text/plain', 'application/vnd.api+json', 'application/*', '*/*', 'json', '', ';',
  'application/json; boundary=' + 'a'.repeat(200), 'text/html; charset=utf-8',
]

/** The body of a request to an operation with this JSON body schema (undefined: the operation takes none). */
export function bodyFor(schema: Schema | undefined, ctx: SchemaContext): fc.Arbitrary<BodySpec> {
  const json = (label: string) => (value: unknown): BodySpec => ({ bytes: Buffer.from(toJsonText(value)), contentType: 'application/json', label })
  const valid = schema ? valueFor(schema, ctx).map(json('schema value')) : fc.constant<BodySpec>({ bytes: Buffer.from('{}'), contentType: 'application/json', label: '{}' })
  const mutated = schema ? mutatedValueFor(schema, ctx).map(json('mutated schema value')) : hostileValue.map(json('hostile value'))
  const anyJson = hostileValue.map(json('hostile value'))
  const text = (bytes: Buffer | string, contentType: string | null, label: string): BodySpec => ({ bytes: Buffer.from(bytes as string), contentType, label })
  const raw = fc.oneof(
    // Truncated or otherwise malformed JSON text.
    fc.tuple(valid, fc.nat()).map(([b, n]) => text(b.bytes!.subarray(0, b.bytes!.length === 0 ? 0 : n % b.bytes!.length), 'application/json', 'truncated JSON')),
    fc.constantFrom('', ' ', 'null', '"x"', '[]', '1', 'true', '{', '}', '{"a":}', "{'a':1}", '{"a":1,}', 'NaN', '{"a":NaN}', '{"a":Infinity}', '\ufeff{}', '{}{}', '{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}', '{"a":1e400}', '{"a":-0}', '{"a":"x","a":"y"}', '{"a\\nb":1,"c\\u2028":2}')
      .map((t) => text(t, 'application/json', 'odd JSON text')),
    fc.constantFrom(5000, 100_000).map((n) => text('['.repeat(n) + ']'.repeat(n), 'application/json', 'deep arrays')),
    fc.constantFrom(5000, 100_000).map((n) => text('{"a":'.repeat(n) + '1' + '}'.repeat(n), 'application/json', 'deep objects')),
    // Not UTF-8: a lone surrogate in CESU-8, an overlong NUL, Latin-1.
    fc.constantFrom([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d], [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d], [0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d], [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])
      .map((b) => text(Buffer.from(b) as unknown as string, 'application/json', 'invalid UTF-8')),
    // A valid body under another media type, or none.
    fc.tuple(valid, fc.constantFrom(...OTHER_TYPES, null)).map(([b, ct]) => ({ ...b, contentType: ct, label: `content-type ${String(ct)}` })),
    fc.tuple(valid, fc.constantFrom(...JSON_TYPES)).map(([b, ct]) => ({ ...b, contentType: ct, label: `content-type ${ct}` })),
    fc.constant<BodySpec>({ bytes: undefined, contentType: null, label: 'no body' }),
    fc.constant<BodySpec>({ bytes: undefined, contentType: 'application/json', label: 'no body, JSON content-type' }),
    fc.constant<BodySpec>({ bytes: Buffer.from('a=1&b=2'), contentType: 'application/x-www-form-urlencoded', label: 'form' }),
    fc.constantFrom(1_100_000, 2_000_000).map((n) => text(`{"a":"${'x'.repeat(n)}"}`, 'application/json', `${n}-byte JSON`)),
  )
  return fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: mutated, weight: 5 }, { arbitrary: anyJson, weight: 1 }, { arbitrary: raw, weight: 2 })
}

// ---------------------------------------------------------------------------------------------
// Paths, query strings, headers

const RAW_SEGMENTS = [
  '', '.', '..', '%2e%2e', '%2E', '...', '%00', 'a%00b', '%2F', 'a%2Fb', '%252F', '%', '%zz', '%C0%AF', '%ED%A0%80', '%FF', '%E2%80%A8',
  '%0A', '%0D%0A', '%20', '+', ';', 'a;b=c', '%3F', '%23', '*', '~', '@', ':', 'a:b', '%5C', '%25',
]

/** Percent-encodes what node:http refuses in a path, leaving `%` escapes (intended or not) alone. */
function encodeLoosely(s: string): string {
  return Array.from(s).map((ch) => (/^[A-Za-z0-9\-._~!$&'()*+,;=:@%]$/.test(ch) ? ch : encodeURIComponent(ch.isWellFormed() ? ch : '\ufffd'))).join('')
}

/** One path segment, already encoded for the request line. */
export function pathSegment(known: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: known.map(encodeURIComponent), weight: 6 },
    { arbitrary: fc.constantFrom(...RAW_SEGMENTS), weight: 2 },
    { arbitrary: hostileString.filter((s) => s.length < 6000).map((s) => encodeURIComponent(s.isWellFormed() ? s : s.toWellFormed())), weight: 2 },
    { arbitrary: hostileString.filter((s) => s.length < 6000).map(encodeLoosely), weight: 1 },
    // Around the router's 4096-character parameter limit, and past Node's 16 KB header limit (431).
    { arbitrary: fc.constantFrom(4095, 4096, 4097, 6000, 20_000).map((n) => 'a'.repeat(n)), weight: 1 },
    // Another id with a suffix, an encoded lone surrogate, or an encoded slash.
    { arbitrary: fc.tuple(known, fc.constantFrom('%2F..', '/..', '%00', '%ED%A0%80', '%20', '.json', '/', '?x=1', '#x')).map(([k, s]) => encodeURIComponent(k) + s), weight: 1 },
  )
}

export interface QueryParam {
  name: string
  schema: Schema
  required?: boolean
}

function queryValueFor(p: QueryParam, ctx: SchemaContext): fc.Arbitrary<string[]> {
  const scalar = (s: Schema): fc.Arbitrary<string> => valueFor(s, ctx, p.name).map((v) => (typeof v === 'string' ? v : v instanceof Raw ? v.text : JSON.stringify(v) ?? ''))
  const items = p.schema.type === 'array' && p.schema.items ? scalar(p.schema.items) : scalar(p.schema)
  return fc.array(items, { minLength: 1, maxLength: p.schema.type === 'array' ? 60 : 2 })
}

const HOSTILE_QUERY_VALUES = ['', '1e308', '1e400', '-0', '-1', '0', '101', '9'.repeat(30), 'NaN', 'Infinity', '0x10', 'true', 'false', 'null', '[]', '{}', '%00', '\u0000', '\ud800', 'x'.repeat(5000), '__proto__', 'a.b', 'tags.x']

/** A query string (without `?`) for an operation with these query parameters. */
export function queryFor(params: QueryParam[], ctx: SchemaContext): fc.Arbitrary<string> {
  const pair = (name: fc.Arbitrary<string>, value: fc.Arbitrary<string>) => fc.tuple(name, value)
  const pairs: fc.Arbitrary<[string, string][]>[] = []
  for (const p of params) {
    if (p.schema.type === 'object') {
      // Dotted keys (tags.env=prod), as the official client writes objects.
      pairs.push(fc.array(pair(fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), hostileKey.filter((k) => k.length < 200)).map((k) => `${p.name}.${k}`), fc.oneof(fc.string({ maxLength: 10 }), hostileString.filter((s) => s.length < 2000))), { maxLength: 4 }))
      pairs.push(fc.constantFrom<[string, string][]>([[p.name, 'x']], [[`${p.name}.`, 'x']], [[`${p.name}.__proto__`, 'x']], [[`${p.name}.constructor`, 'x']], [[`${p.name}.a.b`, 'x']], [[`${p.name}[a]`, 'x']], [[p.name, 'x'], [`${p.name}.a`, 'y']], [[`${p.name}.a`, 'y'], [p.name, 'x']]))
    } else {
      pairs.push(queryValueFor(p, ctx).map((vs) => vs.map((v): [string, string] => [p.name, v])))
      pairs.push(fc.constantFrom(...HOSTILE_QUERY_VALUES).map((v): [string, string][] => [[p.name, v]]))
      pairs.push(fc.constantFrom<[string, string][]>([[`${p.name}.x`, '1']], [[`${p.name}[]`, '1']], [[`${p.name}`, '1'], [`${p.name}`, '2']]))
    }
  }
  pairs.push(fc.array(pair(hostileKey.filter((k) => k.length < 200), fc.constantFrom(...HOSTILE_QUERY_VALUES)), { maxLength: 3 }))
  const chosen: fc.Arbitrary<[string, string][]> = fc
    .subarray(pairs, { maxLength: Math.min(4, pairs.length) })
    .chain((arbs) => (arbs.length === 0 ? fc.constant<[string, string][][]>([]) : (fc.tuple(...arbs) as fc.Arbitrary<[string, string][][]>)))
    .map((lists) => lists.flat())
  // Schema-valid: every required parameter, some optional ones, values of their schema.
  const valid: fc.Arbitrary<[string, string][]> = fc
    .tuple(...params.map((p) => fc.tuple(fc.boolean(), p.schema.type === 'object' ? fc.dictionary(fc.constantFrom('env', 'a', 'category'), fc.string({ maxLength: 8 }), { maxKeys: 2 }).map((d) => Object.entries(d).map(([k, v]): [string, string] => [`${p.name}.${k}`, v])) : queryValueFor(p, ctx).map((vs) => (p.schema.type === 'array' ? vs : vs.slice(0, 1)).map((v): [string, string] => [p.name, v])))))
    .map((chosen) => chosen.flatMap(([include, list], i) => (include || params[i]!.required ? list : [])))
  const encode = fc.boolean()
  return fc.oneof(
    { arbitrary: valid.map((list) => list.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.toWellFormed())}`).join('&')), weight: 6 },
    { arbitrary: fc.tuple(chosen, encode).map(([list, strict]) => list.map(([k, v]) => (strict ? `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}` : `${encodeLoosely(k)}=${encodeLoosely(v)}`)).join('&')), weight: 8 },
    { arbitrary: fc.constantFrom('', '&', '=', '&&=&', 'a', 'a=1&a', '%', '%zz=1', 'a=%E2%80%A8', 'a=%ED%A0%80', 'a%00=1', '__proto__[x]=1', '__proto__.x=1', 'constructor.prototype.x=1', 'x=' + 'y'.repeat(5000)), weight: 1 },
  )
}

/** Header values: latin-1 only (node:http refuses the rest), so "odd encodings" are Latin-1 bytes and UTF-8 read as Latin-1. */
export const hostileHeaderValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', 'undefined', '0', '-1', 'x'.repeat(3000), 'x'.repeat(20_000), 'é', 'Ã©', '\u00ff\u00fe', '%00', '..', '*', 'true', 'Bearer', 'Bearer ', 'bearer x', 'Basic eDp5', 'Bearer a b', 'a,b', '\t'),
  fc.string({ maxLength: 40, unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)) }),
  fc.string({ maxLength: 30 }).map((s) => Buffer.from(s, 'utf8').toString('latin1')),
)
