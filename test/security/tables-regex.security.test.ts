/**
 * Issue #24 item 2: user regular expressions (Tables `$regex` filters, column schema `pattern`s) never reach
 * JavaScript's backtracking RegExp; they run on RE2 (re2js, linear time) on SQLite and for schema patterns, and
 * on PostgreSQL's engine as ARE rewritten to RE2's meaning. Proven by counting, not timing: a RegExp probe
 * (test/helpers/regexp-probe.ts) finds no construction of the attack patterns, which backtracked for seconds to
 * minutes before (`'a?'×24+'b'` against `'a'×32`: 7.2 s). Also: the constructs RE2 cannot run are refused
 * with a 400 that says why, both engines read `.`, `\d`, `\b`, `\z` alike, and SQLite's per-turn work bound
 * stops a filter with a 400.
 */
import type { Client } from '@botpress/client'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileLinearRegex, LINEAR_REGEX_LIMITS } from '../../src/lib/linear-regex.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { probeRegExp } from '../helpers/regexp-probe.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { tableName } from '../helpers/tables.js'

const ATTACKS = ['a?'.repeat(24) + 'b', '(?:a|a)'.repeat(20) + 'b', 'a{0,100}'.repeat(4) + 'b', '(a+)+$', '(a|aa)*b', 'a*a*a*b', 'a?'.repeat(127) + 'b']

describe('Tables: user regular expressions run in linear time', () => {
  let h: Harness
  let client: Client
  let table: string
  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = await runtimeClient(h)
    table = tableName('rx')
    await client.createTable({ name: table, schema: { s: { type: 'string' } }, factor: 3 })
    await client.createTableRows({ table, rows: [{ s: 'a'.repeat(32) }, { s: 'a'.repeat(10_000) }, { s: 'aab' }, { s: 'a\nb' }, { s: 'x1 foo bar' }, { s: 'A' }] })
  })
  afterAll(async () => h?.close())

  const find = async (filter: Record<string, unknown>) => (await client.findTableRows({ table, filter, orderBy: 'id', limit: 100 })).rows.map((r) => r.s as string)

  it('answers the attack filters with no backtracking RegExp built from them', async () => {
    const probe = probeRegExp()
    try {
      for (const pattern of ATTACKS) expect({ pattern, rows: (await find({ s: { $regex: pattern } })).length }).toMatchObject({ pattern })
      expect(await find({ s: { $regex: '^' + 'a?'.repeat(24) + 'b' } })).toEqual(['aab'])
    } finally { probe.restore() }
    expect(probe.sources.filter((s) => ATTACKS.includes(s))).toEqual([])
  })

  it('checks a schema pattern with RE2: an attack pattern and a long value write and read back', async () => {
    const pattern = 'a?'.repeat(40) + 'b'
    const t = tableName('rxp')
    const probe = probeRegExp()
    try {
      await client.createTable({ name: t, schema: { s: { type: 'string', pattern } } })
      const bad = await client.createTableRows({ table: t, rows: [{ s: 'a'.repeat(48) }] })
      expect(bad.rows).toEqual([])
      expect(bad.errors?.join()).toMatch(/does not match its pattern/)
      const ok = await client.createTableRows({ table: t, rows: [{ s: 'a'.repeat(30) + 'b' }] })
      expect(ok.rows).toHaveLength(1)
    } finally { probe.restore() }
    expect(probe.sources.filter((s) => s === pattern)).toEqual([])
  })

  it('refuses what RE2 cannot run, or reads differently, with a 400 that says why', async () => {
    const cases: [string, RegExp][] = [
      ['(.*)\\1', /backreferences are not supported/],
      ['(?=a)a', /lookarounds are not supported/],
      ['(?<=a)b', /lookarounds are not supported/],
      ['(?<n>a)', /named groups and inline flags/],
      ['(?i)a', /named groups and inline flags/],
      ['\\p{L}', /Unicode classes/],
      ['[[:alpha:]]', /POSIX classes/],
      ['a{', /literal \{ must be escaped/],
      ['a{0,101}', /repetition counts above 100/],
      ['\\u0041', /escape \\u is not supported/],
      ['a**', /not a valid regular expression/],
      ['[', /unterminated/],
      ['x'.repeat(300), /longer than 256/],
    ]
    for (const [pattern, why] of cases) {
      const f = await failure(client.findTableRows({ table, filter: { s: { $regex: pattern } } }))
      expect({ pattern, code: f.code, type: f.type }).toEqual({ pattern, code: 400, type: 'InvalidQuery' })
      expect(f.message).toMatch(why)
      const s = await failure(client.createTable({ name: tableName('rxs'), schema: { s: { type: 'string', pattern } } }))
      expect({ pattern, code: s.code, type: s.type }).toEqual({ pattern, code: 400, type: 'InvalidPayload' })
      expect(s.message).toMatch(why)
    }
  })

  it('reads ., \\d, \\b, \\z, \\x and $options alike on both engines (RE2 semantics)', async () => {
    expect(await find({ s: { $regex: '^a.b$' } })).toEqual(['aab'])
    expect(await find({ s: { $regex: '^a[^x]b$' } })).toEqual(['aab', 'a\nb'])
    expect(await find({ s: { $regex: '\\d' } })).toEqual(['x1 foo bar'])
    expect(await find({ s: { $regex: '\\bbar\\z' } })).toEqual(['x1 foo bar'])
    expect(await find({ s: { $regex: '\\boo' } })).toEqual([])
    expect(await find({ s: { $regex: '^\\x41$' } })).toEqual(['A'])
    expect(await find({ s: { $regex: '^\\x{61}\\x{41}B$', $options: 'i' } })).toEqual(['aab'])
    expect(await find({ s: { $regex: '\\w\\s\\w' } })).toEqual(['a\nb', 'x1 foo bar'])
  })

  it('generated nested-quantifier patterns are answered (or refused with a reason), never backtracked', async () => {
    const atom = fc.constantFrom('a', 'b', '.', '[ab]', '\\w')
    const quant = fc.constantFrom('*', '+', '?', '{0,20}', '*?')
    const pattern: fc.Arbitrary<string> = fc.letrec((tie) => ({
      p: fc.oneof({ depthSize: 'small' },
        fc.tuple(atom, quant).map(([a, q]) => a + q),
        fc.tuple(tie('p'), quant).map(([p, q]) => `(?:${p as string})${q}`),
        fc.tuple(tie('p'), tie('p')).map(([x, y]) => `(?:${x as string}|${y as string})`),
        fc.array(tie('p'), { minLength: 2, maxLength: 4 }).map((ps) => (ps as string[]).join('')),
      ),
    })).p.map((p) => p + 'c')
    const seen: string[] = []
    const probe = probeRegExp()
    try {
      await fc.assert(fc.asyncProperty(pattern, async (p) => {
        seen.push(p)
        const res = await client.findTableRows({ table, filter: { s: { $regex: p } } }).then(() => 200, (err: { code?: number; message?: string }) => {
          expect(err.message).toMatch(/refused: (too complex|repetition counts|longer than|not a valid)|PostgreSQL stopped the filter/)
          return err.code
        })
        expect([200, 400]).toContain(res)
      }), { numRuns: 40, seed: 24 })
    } finally { probe.restore() }
    expect(probe.sources.filter((s) => seen.includes(s))).toEqual([])
  })

  it('PostgreSQL\'s engine, which blows up on some nested quantifiers, is stopped by a statement timeout (400); RE2 answers', async () => {
    // Found by the property above: PostgreSQL ran it for minutes against 'a'×10,000 (cancelled at the bound).
    const pattern = '(?:[ab]*.{0,20}a{0,20}a*?|(?:(?:\\w*|(?:\\w*?){0,20})){0,20})c'
    const call = client.findTableRows({ table, filter: { s: { $regex: pattern } } })
    if (h.storeKind === 'postgres') {
      const f = await failure(call)
      expect(f).toMatchObject({ code: 400, type: 'InvalidQuery' })
      expect(f.message).toMatch(/PostgreSQL stopped the filter after 2000 ms/)
    } else {
      expect((await call).rows).toEqual([])
    }
  })

  it('bounds the regex work of one SQLite statement (400); PostgreSQL runs it off the event loop', async () => {
    // A pattern near the program bound, never matching, against rows of maxInput characters: enough rows that
    // the work passes the per-turn bound (counted in instructions × characters, not timed).
    const pattern = '(?:[a-c]{0,40}){0,20}[a-c]{0,100}d'
    const { size } = compileLinearRegex(pattern)
    const rowsNeeded = Math.ceil(LINEAR_REGEX_LIMITS.maxWorkPerTurn / (size * (LINEAR_REGEX_LIMITS.maxInput + 1))) + 1
    const t = tableName('rxw')
    await client.createTable({ name: t, schema: { s: { type: 'string' } }, factor: 3 })
    await client.createTableRows({ table: t, rows: Array.from({ length: rowsNeeded }, () => ({ s: 'abc'.repeat(LINEAR_REGEX_LIMITS.maxInput / 3) })) })
    const call = client.findTableRows({ table: t, filter: { s: { $regex: pattern } } })
    if (h.storeKind === 'sqlite') {
      const f = await failure(call)
      expect(f).toMatchObject({ code: 400, type: 'InvalidQuery' })
      expect(f.message).toMatch(/more regular-expression work than one request may do/)
    } else {
      expect((await call).rows).toEqual([])
    }
    // A narrower condition first: the same pattern on one row is answered.
    const one = await client.findTableRows({ table: t, filter: { $and: [{ id: 1 }, { s: { $regex: pattern } }] } })
    expect(one.rows).toEqual([])
  })
})
