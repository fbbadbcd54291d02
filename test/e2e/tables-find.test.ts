/**
 * findTableRows through `@botpress/client@1.45.0` on both backends: every filter operator checked
 * against the reference evaluation of test/helpers/tables.ts (fast-check generates rows and filters:
 * the server's ids must equal the ids the plain TypeScript evaluation keeps), ordering, paging with
 * hasMore, select, grouping sums, search ranking, and hostile filters answered 400 (never 5xx, never a hang).
 */
import { Client } from '@botpress/client'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { matches, tableName, type Row } from '../helpers/tables.js'

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', 'x-zui': { searchable: true } },
    category: { type: 'string' },
    price: { type: 'number' },
    qty: { type: 'number' },
    active: { type: 'boolean' },
    meta: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'number' } } },
  },
}

const names = ['apple', 'Apricot', 'banana', 'cherry pie', 'date', "o'reilly", 'x; DROP TABLE bot_table_rows; --', 'émile', '']
const categories = ['fruit', 'veg', 'nut']
const rowArb = fc.record({
  name: fc.option(fc.constantFrom(...names), { nil: undefined }),
  category: fc.option(fc.constantFrom(...categories), { nil: undefined }),
  price: fc.option(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, 2.25, -1.5)), { nil: undefined }),
  qty: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  active: fc.option(fc.boolean(), { nil: undefined }),
  meta: fc.option(fc.record({ color: fc.option(fc.constantFrom('red', 'green'), { nil: undefined }), size: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }, { requiredKeys: [] }), { nil: undefined }),
}, { requiredKeys: [] })

const num = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, 2.25))
const str = fc.constantFrom(...names, 'fruit', 'veg', 'nut', 'zzz')
const scalar = fc.oneof(num, str, fc.boolean(), fc.constant(null))
const column = fc.constantFrom('name', 'category', 'price', 'qty', 'active', 'meta.color', 'meta.size', 'id')
const leaf: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.tuple(column, scalar).map(([c, v]) => ({ [c]: v })),
  fc.tuple(column, fc.constantFrom('$eq', '$ne'), scalar).map(([c, op, v]) => ({ [c]: { [op]: v } })),
  fc.tuple(column, fc.constantFrom('$gt', '$gte', '$lt', '$lte'), fc.oneof(num, str)).map(([c, op, v]) => ({ [c]: { [op]: v } })),
  fc.tuple(column, fc.constantFrom('$in', '$nin'), fc.array(scalar, { maxLength: 4 })).map(([c, op, v]) => ({ [c]: { [op]: v } })),
  fc.tuple(column.filter((c) => c !== 'id'), fc.boolean()).map(([c, v]) => ({ [c]: { $exists: v } })),
  fc.tuple(fc.constantFrom('name', 'category', 'meta.color'), fc.constantFrom('^a', 'an', 'E$', '^[a-c]', 'r.*y', 'pie$'), fc.constantFrom('', 'i')).map(([c, p, o]) => ({ [c]: o ? { $regex: p, $options: o } : { $regex: p } })),
  fc.tuple(column, fc.constantFrom('$gt', '$lte', '$eq'), num).map(([c, op, v]) => ({ [c]: { $not: { [op]: v } } })),
)
const filterArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((items) => ({ $and: items })),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((items) => ({ $or: items })),
    tie('node').map((f) => ({ $not: f })),
  ) as fc.Arbitrary<Record<string, unknown>>,
})).node

describe('Tables API: findTableRows', () => {
  let h: Harness
  let client: Client
  let table: string
  let rows: Row[]

  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = await runtimeClient(h)
    table = tableName('find')
    await client.createTable({ name: table, schema })
    const generated = fc.sample(rowArb, { numRuns: 120, seed: 42 })
    const created = await client.createTableRows({ table, rows: generated })
    expect(created.errors).toBeUndefined()
    rows = created.rows as Row[]
  }, 60_000)
  afterAll(async () => h?.close())

  const ids = async (filter: Record<string, unknown>) =>
    (await client.findTableRows({ table, filter, limit: 1000, orderBy: 'id' })).rows.map((r) => r.id)

  it('gives the ids of the reference evaluation for generated filters', async () => {
    await fc.assert(fc.asyncProperty(filterArb, async (filter) => {
      const expected = rows.filter((r) => matches(r, filter)).map((r) => r.id)
      expect(await ids(filter)).toEqual(expected)
    }), { numRuns: 150, seed: 7 })
  }, 120_000)

  it('checks each operator on its own against the reference', async () => {
    const cases: Record<string, unknown>[] = [
      { category: 'fruit' }, { category: { $eq: 'veg' } }, { category: { $ne: 'veg' } }, { price: { $gt: 1 } }, { price: { $gte: 2.25 } },
      { price: { $lt: 0 } }, { price: { $lte: -1.5 } }, { name: { $gt: 'b' } }, { category: { $in: ['nut', 'veg'] } }, { qty: { $nin: [0, 1] } },
      { meta: { $exists: true } }, { price: { $exists: false } }, { name: { $regex: '^a' } }, { name: { $regex: '^A', $options: 'i' } },
      { $and: [{ active: true }, { price: { $gt: 0 } }] }, { $or: [{ active: false }, { qty: 3 }] }, { $not: { category: 'fruit' } },
      { price: { $not: { $gt: 0 } } }, { 'meta.color': 'red' }, { 'meta.size': { $gte: 2 } }, { active: null }, { name: { $ne: null } },
      { id: { $lte: rows[10]!.id } }, { createdAt: { $lte: new Date(Date.now() + 60_000).toISOString() } }, { updatedAt: { $gt: '2000-01-01T00:00:00.000Z' } },
      { name: "o'reilly" }, { name: 'x; DROP TABLE bot_table_rows; --' },
    ]
    for (const filter of cases) {
      const expected = rows.filter((r) => matches(r, filter)).map((r) => r.id)
      expect({ filter, ids: await ids(filter) }).toEqual({ filter, ids: expected })
    }
    expect(await ids({ category: 'fruit' })).not.toEqual([])
  })

  it('orders, pages with hasMore and selects columns', async () => {
    const withPrice = rows.filter((r) => typeof r.price === 'number')
    const expected = [...withPrice].sort((a, b) => (b.price as number) - (a.price as number) || a.id - b.id).map((r) => r.id)
    const page1 = await client.findTableRows({ table, filter: { price: { $exists: true } }, orderBy: 'price', orderDirection: 'desc', limit: 10 })
    const page2 = await client.findTableRows({ table, filter: { price: { $exists: true } }, orderBy: 'price', orderDirection: 'desc', limit: 10, offset: 10 })
    expect([...page1.rows, ...page2.rows].map((r) => r.id)).toEqual(expected.slice(0, 20))
    expect(page1).toMatchObject({ hasMore: true, limit: 10, offset: 0 })
    const last = await client.findTableRows({ table, limit: 1000 })
    expect(last.hasMore).toBe(false)
    expect(last.rows).toHaveLength(rows.length)
    const selected = await client.findTableRows({ table, select: ['name'], limit: 5, orderBy: 'id' })
    for (const r of selected.rows) expect(Object.keys(r).sort()).toEqual(expect.arrayContaining(['id']))
    for (const r of selected.rows) expect(r.price).toBeUndefined()
  })

  it('groups with key, count, sum, avg, min and max', async () => {
    const r = await client.findTableRows({ table, group: { category: 'key', price: ['sum', 'avg', 'min', 'max', 'count'] } })
    const keys = [...new Set(rows.map((x) => (typeof x.category === 'string' ? x.category : null)))]
    expect(r.rows).toHaveLength(keys.length)
    for (const g of r.rows) {
      const members = rows.filter((x) => (x.category ?? null) === g.categoryKey)
      const prices = members.map((x) => x.price).filter((p): p is number => typeof p === 'number')
      expect(g.priceCount).toBe(prices.length)
      expect(g.priceSum).toBeCloseTo(prices.reduce((a, b) => a + b, 0), 9)
      if (prices.length > 0) {
        expect(g.priceAvg).toBeCloseTo(prices.reduce((a, b) => a + b, 0) / prices.length, 9)
        expect(g.priceMin).toBe(Math.min(...prices))
        expect(g.priceMax).toBe(Math.max(...prices))
      }
    }
    const filtered = await client.findTableRows({ table, filter: { active: true }, group: { active: 'key', qty: 'sum' } })
    expect(filtered.rows).toEqual([{ activeKey: true, qtySum: rows.filter((x) => x.active === true).reduce((a, x) => a + (typeof x.qty === 'number' ? x.qty : 0), 0) }])
  })

  it('ranks search results by the share of terms found', async () => {
    const t = tableName('search')
    await client.createTable({ name: t, schema: { title: { type: 'string', 'x-zui': { searchable: true } }, body: { type: 'string', 'x-zui': { searchable: true } }, n: { type: 'number' } } })
    await client.createTableRows({ table: t, rows: [
      { title: 'Shipping policy', body: 'Orders ship in two days', n: 1 },
      { title: 'Returns', body: 'Return any order within 30 days', n: 2 },
      { title: 'Refund and shipping', body: 'Refunds for lost orders and free shipping', n: 3 },
      { title: 'Opening hours', body: 'We are open daily', n: 4 },
    ] })
    const r = await client.findTableRows({ table: t, search: 'shipping refund' })
    expect(r.rows.map((x) => x.n)).toEqual([3, 1])
    expect(r.rows[0]!.similarity).toBe(1)
    expect(r.rows[1]!.similarity).toBe(0.5)
    const filtered = await client.findTableRows({ table: t, search: 'shipping', filter: { n: { $lt: 3 } } })
    expect(filtered.rows.map((x) => x.n)).toEqual([1])
  })

  it('answers hostile filters with 400 and the reason', async () => {
    let deep: Record<string, unknown> = { price: 1 }
    for (let i = 0; i < 20; i++) deep = { $and: [deep] }
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ price: { $where: 'sleep(1)' } }, /unknown operator "\$where"/],
      [{ $expr: {} }, /unknown operator "\$expr"/],
      [{ "name') OR 1=1 --": 'x' }, /unknown column/],
      [{ 'meta.col or(1)': 'x' }, /invalid path segment/],
      [deep, /nested deeper than 8/],
      [{ price: { $in: Array.from({ length: 1001 }, (_, i) => i) } }, /more than 1000 values/],
      [{ name: { $regex: '(.*)\\1' } }, /backreferences/],
      [{ name: { $regex: '(?=a)a' } }, /lookarounds/],
      [{ name: { $regex: 'x'.repeat(300) } }, /longer than 256/],
      [{ name: { $regex: '[' } }, /an unterminated \[ class/],
      [{ name: { $regex: 'a', $options: 'g' } }, /\$options/],
      [{ name: { a: 1 } }, /unknown operator "a"/],
      [{ meta: { color: 'red' } }, /unknown operator "color"/],
      [{ price: [1, 2] }, /objects and arrays are not comparable/],
      [{ price: { $gt: true } }, /takes a number, a string or a date/],
      [{ createdAt: { $gt: 'yesterday' } }, /ISO 8601/],
    ]
    for (const [filter, why] of cases) {
      const f = await failure(client.findTableRows({ table, filter }))
      expect({ filter, code: f.code, type: f.type }).toEqual({ filter, code: 400, type: 'InvalidQuery' })
      expect(f.message).toMatch(why)
    }
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`$or`.slice(0, 0) + 'price', i]))
    expect(await ids(many)).toEqual(rows.filter((r) => r.price === 299).map((r) => r.id))
    const wide = { $or: Array.from({ length: 250 }, (_, i) => ({ price: i })) }
    expect((await failure(client.findTableRows({ table, filter: wide }))).message).toMatch(/more than 200 conditions/)
    // A long value against accepted patterns (RE2: nested quantifiers are linear too): bounded work, an answer.
    const t = tableName('regex')
    await client.createTable({ name: t, schema: { s: { type: 'string' } } })
    await client.createTableRows({ table: t, rows: [{ s: 'a'.repeat(3000) + '!' }] })
    for (const pattern of ['^a+a+$', '(a+)+$', '(a|aa)*b', 'a*a*a*b']) {
      expect((await client.findTableRows({ table: t, filter: { s: { $regex: pattern } } })).rows).toEqual([])
    }
    expect((await failure(client.findTableRows({ table, orderBy: 'nope' }))).message).toMatch(/orderBy: unknown column/)
    expect((await failure(client.findTableRows({ table, group: { price: 'median' } }))).message).toMatch(/each operation is one of/)
    expect((await failure(client.findTableRows({ table, group: { name: 'sum' } }))).message).toMatch(/needs a number column/)
  })
})
