/**
 * The Tables API through the official `@botpress/client@1.45.0` over real HTTP: table definitions
 * (JSON Schema and plain form, limits, key column, factor, frozen, tags, schema changes refused with
 * the reason, column rename, duplicate), rows (create/get/update/upsert/delete with per-row errors)
 * and tenancy (another bot's tables are 404).
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, failure, runtimeClient } from '../helpers/runtime-client.js'
import { tableName } from '../helpers/tables.js'

const schema = {
  type: 'object',
  properties: {
    sku: { type: 'string' },
    name: { type: 'string', 'x-zui': { searchable: true } },
    price: { type: 'number' },
    inStock: { type: 'boolean' },
    meta: { type: 'object', properties: { color: { type: 'string' }, weight: { type: 'number' } } },
  },
  required: ['name'],
}

describe('Tables API: tables and rows', () => {
  let h: Harness
  let client: Client
  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = await runtimeClient(h)
  })
  afterAll(async () => h?.close())

  it('creates, gets, lists, updates and deletes a table', async () => {
    const name = tableName('crud')
    const { table } = await client.createTable({ name, schema, keyColumn: 'sku', tags: { team: 'shop' } })
    expect(table).toMatchObject({ name, factor: 1, frozen: false, keyColumn: 'sku', tags: { team: 'shop' } })
    expect(Object.keys(table.schema.properties)).toEqual(['sku', 'name', 'price', 'inStock', 'meta'])
    expect(table.schema.properties.name!['x-zui'].searchable).toBe(true)
    const got = await client.getTable({ table: name })
    expect(got).toMatchObject({ table: { id: table.id }, rows: 0 })
    expect((await client.getTable({ table: table.id })).table.name).toBe(name)
    const listed = await client.listTables({ tags: { team: 'shop' } })
    expect(listed.tables.map((t) => t.id)).toContain(table.id)
    expect((await client.listTables({ tags: { team: 'none' } })).tables).toEqual([])
    expect((await failure(client.createTable({ name, schema }))).code).toBe(409)
    const again = await client.getOrCreateTable({ table: name, schema })
    expect(again).toMatchObject({ created: false, table: { id: table.id } })
    const fresh = await client.getOrCreateTable({ table: tableName('goc'), schema: { a: { type: 'string' } } })
    expect(fresh.created).toBe(true)
    expect(Object.keys(fresh.table.schema.properties)).toEqual(['a'])
    const renamed = tableName('renamed')
    const updated = await client.updateTable({ table: table.id, name: renamed, factor: 2, tags: { team: 'ops' } })
    expect(updated.table).toMatchObject({ name: renamed, factor: 2, tags: { team: 'ops' } })
    expect((await failure(client.updateTable({ table: table.id, factor: 1 }))).message).toMatch(/factor can only increase/)
    await client.deleteTable({ table: table.id })
    expect((await failure(client.getTable({ table: table.id }))).code).toBe(404)
  })

  it('refuses bad definitions with the reason', async () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`c${i}`, { type: 'string' }]))
    expect((await failure(client.createTable({ name: tableName(), schema: many }))).message).toMatch(/at most 20 columns/)
    expect((await failure(client.createTable({ name: 'bad name', schema }))).code).toBe(400)
    expect((await failure(client.createTable({ name: tableName(), schema, keyColumn: 'nope' }))).message).toMatch(/keyColumn "nope"/)
    expect((await failure(client.createTable({ name: tableName(), schema, keyColumn: 'meta' }))).message).toMatch(/string or number/)
    expect((await failure(client.createTable({ name: tableName(), schema: { x: { type: 'date' } } }))).message).toMatch(/type must be one of/)
    expect((await failure(client.createTable({ name: tableName(), schema: { x: { type: 'string', pattern: '(?=a)a' } } }))).message).toMatch(/lookarounds are not supported/)
  })

  it('creates rows with per-row errors, gets, updates and deletes them', async () => {
    const name = tableName('rows')
    await client.createTable({ name, schema, keyColumn: 'sku' })
    const created = await client.createTableRows({
      table: name,
      rows: [
        { sku: 'a', name: 'Apple', price: 1.5, inStock: true, meta: { color: 'red', weight: 3 } },
        { sku: 'b', name: 'Banana', price: 'cheap' },
        { sku: 'c', price: 2 },
        { sku: 'a', name: 'Again' },
        { sku: 'd', name: 'Date', extra: 1 },
      ],
    })
    expect(created.rows.map((r) => r.name)).toEqual(['Apple', 'Date'])
    expect(created.errors).toEqual([
      expect.stringMatching(/^Row 1: column "price" must be of type number/),
      expect.stringMatching(/^Row 2: column "name" is required/),
      expect.stringMatching(/^Row 3: key column "sku"/),
    ])
    expect(created.warnings).toEqual([expect.stringMatching(/column "extra" is not in the table's schema/)])
    const apple = created.rows[0]!
    expect(apple).toMatchObject({ id: expect.any(Number), computed: {}, meta: { color: 'red', weight: 3 } })
    expect((await client.getTableRow({ table: name, id: apple.id })).row).toMatchObject({ sku: 'a', price: 1.5 })
    const upd = await client.updateTableRows({ table: name, rows: [{ id: apple.id, price: 2 }, { id: 999999, name: 'x' }, { id: apple.id, inStock: 'yes' }] })
    expect(upd.rows).toHaveLength(1)
    expect(upd.rows[0]).toMatchObject({ sku: 'a', name: 'Apple', price: 2 })
    expect(upd.errors).toHaveLength(2)
    // The size limit: 4 KB × factor.
    const big = await client.createTableRows({ table: name, rows: [{ name: 'x'.repeat(5000) }] })
    expect(big.errors?.[0]).toMatch(/4 KB × factor 1/)
    const { deletedRows } = await client.deleteTableRows({ table: name, ids: [apple.id, 424242] })
    expect(deletedRows).toBe(1)
    expect((await failure(client.getTableRow({ table: name, id: apple.id }))).code).toBe(404)
  })

  it('upserts by the key column', async () => {
    const name = tableName('upsert')
    await client.createTable({ name, schema, keyColumn: 'sku' })
    const first = await client.upsertTableRows({ table: name, rows: [{ sku: 'k1', name: 'One', price: 1 }, { sku: 'k2', name: 'Two', price: 2 }] })
    expect(first.inserted.map((r) => r.sku)).toEqual(['k1', 'k2'])
    expect(first.updated).toEqual([])
    const second = await client.upsertTableRows({ table: name, keyColumn: 'sku', rows: [{ sku: 'k1', name: 'One again', price: 10 }, { sku: 'k3', name: 'Three' }, { name: 'no key' }] })
    expect(second.updated).toEqual([expect.objectContaining({ id: first.inserted[0]!.id, name: 'One again', price: 10 })])
    expect(second.inserted.map((r) => r.sku)).toEqual(['k3'])
    expect(second.errors).toEqual([expect.stringMatching(/Row 2: the key column "sku" has no value/)])
    const all = await client.findTableRows({ table: name, orderBy: 'sku' })
    expect(all.rows.map((r) => [r.sku, r.price ?? null])).toEqual([['k1', 10], ['k2', 2], ['k3', null]])
    const noKey = tableName('nokey')
    await client.createTable({ name: noKey, schema })
    expect((await failure(client.upsertTableRows({ table: noKey, rows: [{ name: 'x' }] }))).message).toMatch(/needs a keyColumn/)
  })

  it('refuses schema changes that existing rows break, renames columns, freezes, duplicates', async () => {
    const name = tableName('change')
    const { table } = await client.createTable({ name, schema })
    await client.createTableRows({ table: name, rows: [{ name: 'A', price: 1 }, { name: 'B', sku: 'x' }] })
    const typeChange = await failure(client.updateTable({ table: name, schema: { ...schema, properties: { ...schema.properties, price: { type: 'string' } } } }))
    expect(typeChange).toMatchObject({ code: 400 })
    expect(typeChange.message).toMatch(/column "price": row \d+ holds a value that is not of the new type string/)
    const required = await failure(client.updateTable({ table: name, schema: { ...schema, required: ['name', 'sku'] } }))
    expect(required.message).toMatch(/column "sku": row \d+ has no value/)
    const keyDup = await client.createTableRows({ table: name, rows: [{ name: 'B' }] })
    expect(keyDup.rows).toHaveLength(1)
    expect((await failure(client.updateTable({ table: name, keyColumn: 'name' }))).message).toMatch(/appears in more than one row/)
    // A compatible change: a new column.
    await client.updateTable({ table: name, schema: { ...schema, properties: { ...schema.properties, note: { type: 'string' } } } })
    const renamed = await client.renameTableColumn({ table: name, name: 'price', newName: 'cost' })
    expect(Object.keys(renamed.table.schema.properties)).toContain('cost')
    const rows = (await client.findTableRows({ table: name, filter: { name: 'A' } })).rows
    expect(rows[0]).toMatchObject({ cost: 1 })
    expect(rows[0]!.price).toBeUndefined()
    await client.updateTable({ table: name, frozen: true })
    expect((await failure(client.updateTable({ table: name, name: tableName() }))).message).toMatch(/frozen/)
    expect((await failure(client.renameTableColumn({ table: name, name: 'cost', newName: 'price' }))).message).toMatch(/frozen/)
    await client.updateTable({ table: name, frozen: false })
    const copyName = tableName('copy')
    const dup = await client.duplicateTable({ sourceTableId: table.id, tableName: copyName })
    expect(dup.table.name).toBe(copyName)
    expect((await client.getTable({ table: copyName })).rows).toBe(3)
    const schemaOnly = await client.duplicateTable({ sourceTableId: table.id, tableName: tableName('schema'), schemaOnly: true })
    expect((await client.getTable({ table: schemaOnly.table.id })).rows).toBe(0)
  })

  it('keeps tables per bot: another bot\'s table is 404', async () => {
    const name = tableName('tenant')
    await client.createTable({ name, schema })
    const admin = adminClient(h)
    const { bot } = await admin.createBot({ name: `other-${Date.now()}` })
    const other = await runtimeClient(h, bot.id)
    expect((await failure(other.getTable({ table: name }))).code).toBe(404)
    expect((await failure(other.findTableRows({ table: name }))).code).toBe(404)
    expect((await failure(other.createTableRows({ table: name, rows: [{ name: 'x' }] }))).code).toBe(404)
    expect((await other.listTables({})).tables).toEqual([])
  })
})
