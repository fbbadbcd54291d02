/**
 * Contract of TableStore (src/store/table-store.ts), run against each engine: tables per bot (unique
 * names, lookup by id or name, rename-column rewrites rows), rows (batched inserts, key values unique per
 * table and skipped when taken, replace, delete by ids and by condition), the condition compiler (typed
 * comparisons never NULL under NOT, key-column equality, regex, typeIn), grouping, search similarity,
 * duplicate, cascade with the bot, and job claims with leases (one claimer per job, expired leases
 * taken over, only the holder updates).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import { UniqueViolation } from '../../src/store/store.js'
import type { RowCondition, TableJobRow, TableRow } from '../../src/store/table-store.js'
import { seed } from './store.contract.js'
import { TablesService } from '../../src/domain/tables-service.js'

export type TableStoreFactory = () => Promise<{ store: Store; second: Store; cleanup: () => Promise<void> }>

let seq = 0
const tableRow = (botId: string, over: Partial<TableRow> = {}): TableRow => ({
  id: `table_c${++seq}${Date.now().toString(36)}`, botId, name: `c${seq}Table`,
  definition: { schema: { type: 'object', properties: {} }, keyColumn: 'k', factor: 1, frozen: false, tags: {}, isComputeEnabled: false },
  createdAt: 1000, updatedAt: 1000, ...over,
})
const rec = (data: Record<string, unknown>, key?: string) => ({ data: data as never, keyValue: key === undefined ? null : JSON.stringify(key), searchText: typeof data.text === 'string' ? data.text.toLowerCase() : null })
const f = (path: string) => ({ kind: 'json' as const, path: path.split('.') })

export function describeTablesContract(name: string, factory: TableStoreFactory): void {
  describe(`TableStore contract: ${name}`, () => {
    let store: Store
    let second: Store
    let cleanup: () => Promise<void>
    let botId: string
    let table: TableRow

    beforeAll(async () => {
      ;({ store, second, cleanup } = await factory())
      botId = (await seed(store)).bot.id
      table = tableRow(botId)
      await store.tables.createTable(table)
      await store.tables.insertRows(table.id, [
        rec({ k: 'a', n: 1, s: 'apple', b: true, o: { c: 'red' }, text: 'Red apple pie' }, 'a'),
        rec({ k: 'b', n: 2.5, s: 'Banana', b: false, o: { c: 'yellow' }, text: 'banana split' }, 'b'),
        rec({ n: -3, s: null, text: 'apple banana cherry' }),
        rec({ s: 'x\' OR 1=1 --', n: '7' }),
      ], 2000)
    })
    afterAll(async () => cleanup?.())

    const ids = async (where: RowCondition) => (await store.tables.findRows(table.id, { where, limit: 100, offset: 0 })).rows.map((r) => r.data.k ?? r.data.s ?? r.data.n)

    it('finds tables by id or name within their bot, names unique per bot', async () => {
      expect((await store.tables.getTable(botId, table.id))?.name).toBe(table.name)
      expect((await store.tables.getTable(botId, table.name))?.id).toBe(table.id)
      expect(await store.tables.getTable('other-bot', table.id)).toBeUndefined()
      await expect(store.tables.createTable(tableRow(botId, { name: table.name }))).rejects.toBeInstanceOf(UniqueViolation)
      expect((await store.tables.listTables(botId)).map((t) => t.id)).toContain(table.id)
      expect(await store.tables.countRows(table.id)).toBe(4)
    })

    it('compiles conditions: typed comparisons, NOT over missing values, key equality, regex, typeIn', async () => {
      expect(await ids({ op: 'gt', field: f('n'), value: 1 })).toEqual(['b'])
      expect(await ids({ op: 'not', item: { op: 'gt', field: f('n'), value: 1 } })).toEqual(['a', -3, 'x\' OR 1=1 --'])
      expect(await ids({ op: 'eq', field: f('s'), value: 'x\' OR 1=1 --' })).toEqual(['x\' OR 1=1 --'])
      expect(await ids({ op: 'eq', field: { ...f('k'), isKey: true }, value: 'b' })).toEqual(['b'])
      expect(await ids({ op: 'not', item: { op: 'eq', field: { ...f('k'), isKey: true }, value: 'b' } })).toEqual(['a', -3, 'x\' OR 1=1 --'])
      expect(await ids({ op: 'eq', field: f('b'), value: false })).toEqual(['b'])
      expect(await ids({ op: 'not', item: { op: 'in', field: f('b'), values: [true] } })).toEqual(['b', -3, 'x\' OR 1=1 --'])
      expect(await ids({ op: 'isNull', field: f('s') })).toEqual([-3])
      expect(await ids({ op: 'exists', field: f('o.c') })).toEqual(['a', 'b'])
      expect(await ids({ op: 'regex', field: f('s'), pattern: '^b', flags: 'i' })).toEqual(['b'])
      expect(await ids({ op: 'typeIn', field: f('n'), types: ['string'] })).toEqual(['x\' OR 1=1 --'])
      expect(await ids({ op: 'in', field: f('n'), values: [1, 2.5, '7'] })).toEqual(['a', 'b', 'x\' OR 1=1 --'])
      expect(await ids({ op: 'gte', field: { kind: 'id' }, value: 0.5 })).toHaveLength(4)
    })

    it('skips rows whose key value is taken, replaces and deletes rows', async () => {
      const t = tableRow(botId)
      await store.tables.createTable(t)
      const [one, dup, free] = await store.tables.insertRows(t.id, [rec({ k: 'x' }, 'x'), rec({ k: 'x' }, 'x'), rec({ k: 'y' })], 3000)
      expect(one?.data).toEqual({ k: 'x' })
      expect(dup).toBeUndefined()
      expect(free?.id).toBeGreaterThan(one!.id)
      expect((await store.tables.getRowsByKey(t.id, ['"x"'])).map((r) => r.id)).toEqual([one!.id])
      const [replaced, clash] = await store.tables.replaceRows(t.id, [{ ...rec({ k: 'z', v: 1 }, 'z'), id: one!.id }, { ...rec({ k: 'z' }, 'z'), id: free!.id }], 4000)
      expect(replaced).toMatchObject({ data: { k: 'z', v: 1 }, updatedAt: 4000, createdAt: 3000 })
      expect(clash).toBeUndefined()
      expect(await store.tables.deleteRowsWhere(t.id, { op: 'eq', field: f('k'), value: 'y' }, 10)).toBe(1)
      expect(await store.tables.deleteRowsById(t.id, [one!.id, 999_999])).toBe(1)
      expect(await store.tables.countRows(t.id)).toBe(0)
    })

    it('groups, searches with similarity, orders and pages', async () => {
      const g = await store.tables.groupRows(table.id, { op: 'true' }, [{ field: { kind: 'json', path: ['b'], type: 'boolean' }, name: 'b', ops: ['key'] }, { field: { kind: 'json', path: ['n'], type: 'number' }, name: 'n', ops: ['sum', 'count'] }], 10, 0)
      expect(g.rows).toEqual([{ bKey: null, nSum: -3, nCount: 2 }, { bKey: false, nSum: 2.5, nCount: 1 }, { bKey: true, nSum: 1, nCount: 1 }])
      const s = await store.tables.findRows(table.id, { where: { op: 'true' }, search: ['apple', 'banana'], limit: 10, offset: 0 })
      expect(s.rows.map((r) => [r.data.text, r.similarity])).toEqual([['apple banana cherry', 1], ['Red apple pie', 0.5], ['banana split', 0.5]])
      const page = await store.tables.findRows(table.id, { where: { op: 'true' }, orderBy: { field: { kind: 'json', path: ['n'], type: 'number' }, direction: 'desc' }, limit: 2, offset: 0 })
      expect(page.rows.map((r) => r.data.n)).toEqual([2.5, 1])
      expect(page.hasMore).toBe(true)
    })

    it('renames a column in every row, duplicates a table, deletes rows with their table and bot', async () => {
      const t = tableRow(botId)
      await store.tables.createTable(t)
      await store.tables.insertRows(t.id, [rec({ old: 1, keep: 2 }), rec({ keep: 3 })], 5000)
      await store.tables.updateTable(t.id, { definition: t.definition, renameColumn: { from: 'old', to: 'new' } }, 6000)
      expect((await store.tables.scanRows(t.id, 0, 10)).map((r) => r.data)).toEqual([{ keep: 2, new: 1 }, { keep: 3 }])
      const copy = tableRow(botId)
      expect(await store.tables.duplicateTable(t.id, copy, true)).toBe(2)
      expect(await store.tables.countRows(copy.id)).toBe(2)
      expect(await store.tables.deleteTable(t.id)).toBe(true)
      expect(await store.tables.countRows(t.id)).toBe(0)
      await store.deleteBot(botId)
      expect(await store.tables.listTables(botId)).toEqual([])
      expect(await store.tables.countRows(copy.id)).toBe(0)
    })

    it('keeps column indexes in step: queries through them give the same rows; they go with the table', async () => {
      const t = tableRow((await seed(store)).bot.id, { id: `table_${(++seq).toString(16).padStart(8, '0')}ab` })
      await store.tables.createTable(t)
      await store.tables.syncIndexes(t.id, [{ name: 'n', type: 'number' }, { name: 's', type: 'string' }])
      await store.tables.insertRows(t.id, Array.from({ length: 50 }, (_, i) => rec({ n: i, s: `s${i % 5}`, k: `k${i}` }, `k${i}`)), 7000)
      const q = async (where: RowCondition) => (await store.tables.findRows(t.id, { where, limit: 100, offset: 0 })).rows.map((r) => r.data.n)
      const n = { kind: 'json' as const, path: ['n'], type: 'number' as const, indexed: true }
      const sCol = { kind: 'json' as const, path: ['s'], type: 'string' as const, indexed: true }
      const key = { kind: 'json' as const, path: ['k'], type: 'string' as const, isKey: true }
      expect(await q({ op: 'and', items: [{ op: 'gte', field: n, value: 10 }, { op: 'lt', field: n, value: 13 }] })).toEqual([10, 11, 12])
      expect(await q({ op: 'and', items: [{ op: 'eq', field: sCol, value: 's1' }, { op: 'lt', field: n, value: 20 }] })).toEqual([1, 6, 11, 16])
      expect(await q({ op: 'in', field: key, values: ['k3', 'k44', 'zz'] })).toEqual([3, 44])
      expect(await q({ op: 'in', field: sCol, values: ['s4'] })).toHaveLength(10)
      expect(await store.tables.deleteRowsWhere(t.id, { op: 'gte', field: n, value: 45 }, 100)).toBe(5)
      const g = await store.tables.groupRows(t.id, { op: 'lt', field: n, value: 10 }, [{ field: sCol as never, name: 's', ops: ['key', 'count'] }], 10, 0)
      expect(g.rows).toEqual(['s0', 's1', 's2', 's3', 's4'].map((v) => ({ sKey: v, sCount: 2 })))
      await store.tables.syncIndexes(t.id, [{ name: 'n', type: 'number' }])
      expect(await q({ op: 'gt', field: n, value: 43 })).toEqual([44])
      // A condition on a column whose index is gone (a concurrent schema change) still answers.
      expect(await q({ op: 'eq', field: sCol, value: 's2' })).toEqual([2, 7, 12, 17, 22, 27, 32, 37, 42])
      expect(await store.tables.deleteTable(t.id)).toBe(true)
    })

    it('claims each job once across instances; expired leases are taken over; only the holder updates', async () => {
      const bot = (await seed(store)).bot.id
      const t = tableRow(bot)
      await store.tables.createTable(t)
      const job = (i: number): TableJobRow => ({ id: `job_c${seq}_${i}`, botId: bot, tableId: t.id, type: 'delete_rows', status: 'pending', progress: 0, params: { i }, inputFileId: null, outputFileId: null, error: null, attempts: 0, createdAt: i, updatedAt: i })
      for (let i = 0; i < 6; i++) await store.tables.createJob(job(i))
      const now = 10 ** 13
      // Rounds of concurrent claimers on both handles (a claimer that loses a race gets nothing, like
      // the webhook queue's) until the queue is empty: every job claimed exactly once.
      const claims: { job: TableJobRow; owner: string }[] = []
      for (let round = 0; round < 20; round++) {
        const got = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : store).tables.claimJob(`w${round}_${i}`, now, 1000).then((job) => job && { job, owner: `w${round}_${i}` })))
        const won = got.filter((c) => c !== undefined)
        if (won.length === 0) break
        claims.push(...won)
      }
      expect(claims.map((c) => c.job.id).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `job_c${seq}_${i}`).sort())
      const first = claims.find((c) => c.job.id === `job_c${seq}_0`)!.job
      const holder = claims.find((c) => c.job.id === first.id)!.owner
      expect(await store.tables.updateJob(first.id, 'intruder', { progress: 0.5 }, now, now + 1000)).toBe(false)
      expect(await store.tables.updateJob(first.id, holder, { progress: 0.5, params: { cursor: 3 } }, now, now + 1000)).toBe(true)
      const retaken = await store.tables.claimJob('later', now + 5000, 1000)
      expect(retaken?.attempts).toBe(2)
      expect(await store.tables.updateJob(retaken!.id, 'later', { status: 'completed', progress: 1 }, now + 5000, 0)).toBe(true)
      expect((await store.tables.getJob(retaken!.id))?.status).toBe('completed')
      expect((await store.tables.listJobs(t.id, 100)).length).toBe(6)
    })

    it('inserts large batches in order, matching skipped keys back to their input across statement chunks', async () => {
      const t = tableRow((await seed(store)).bot.id)
      await store.tables.createTable(t)
      // 1,500 rows: more than one statement on either engine; every 7th repeats an earlier key
      const input = Array.from({ length: 1500 }, (_, i) => (i % 7 === 6 ? rec({ k: `k${i - 3}`, i }, `k${i - 3}`) : rec({ k: `k${i}`, i, o: { z: 1, a: [i, 'x'] } }, `k${i}`)))
      const out = await store.tables.insertRows(t.id, input, 7000)
      expect(out.map((r) => (r === undefined ? undefined : r.data))).toEqual(input.map((r, i) => (i % 7 === 6 ? undefined : r.data)))
      const ids = out.filter((r) => r !== undefined).map((r) => r!.id)
      expect(ids).toEqual([...ids].sort((a, b) => a - b))
      // what insertRows answered is what a read gives
      const read = await store.tables.getRows(t.id, ids.slice(0, 50))
      expect(read.sort((a, b) => a.id - b.id)).toEqual(out.filter((r) => r !== undefined).slice(0, 50))
      expect(await store.tables.countRows(t.id)).toBe(1500 - Math.floor(1500 / 7))
    })

    it('findRows says, in the same statement, whether the table is still the one the query was built from', async () => {
      const bot = (await seed(store)).bot.id
      const t = tableRow(bot)
      await store.tables.createTable(t)
      await store.tables.insertRows(t.id, [rec({ k: 'a', n: 1 }, 'a')], 8000)
      const read = (await store.tables.getTable(bot, t.id))!
      const expect_ = { botId: bot, name: read.name, definition: JSON.stringify(read.definition) }
      const q = (where: RowCondition, e = expect_) => second.tables.findRows(t.id, { where, limit: 10, offset: 0, expect: e })
      expect((await q({ op: 'true' })).current).toBe(true)
      expect((await q({ op: 'eq', field: f('k'), value: 'none' })).current).toBeUndefined() // nothing matched: nothing to tell
      expect((await q({ op: 'true' }, { ...expect_, botId: 'other-bot' })).current).toBe(false)
      // another instance changes the table: the next query says so
      await store.tables.updateTable(t.id, { definition: { ...read.definition, frozen: true } }, 9000)
      expect((await q({ op: 'true' })).current).toBe(false)
      await store.tables.updateTable(t.id, { name: `${read.name.slice(0, -5)}xTable` }, 9001)
      expect((await q({ op: 'true' }, { ...expect_, definition: JSON.stringify({ ...read.definition, frozen: true }) })).current).toBe(false)
      expect((await store.tables.findRows(t.id, { where: { op: 'true' }, limit: 10, offset: 0 })).current).toBeUndefined()
    })

    it('the tables service answers from the table as it is, though another instance changed it after a query', async () => {
      const bot = (await seed(store)).bot.id
      const one = new TablesService(store)
      const other = new TablesService(second)
      const t = await one.createTable(bot, { name: 'ChangingTable', schema: { k: { type: 'string' }, n: { type: 'number' } } } as never)
      await one.createRows(bot, t.id, [{ k: 'a', n: 1 }, { k: 'b', n: 2 }])
      const found = async (input: Parameters<TablesService['findRows']>[2], svc = one, name = 'ChangingTable') => (await svc.findRows(bot, name, input)).rows.map((r) => (r as { data?: Record<string, unknown> }).data ?? r)
      expect(await found({ filter: { n: { $gt: 1 } } })).toMatchObject([{ k: 'b' }])
      // renamed column, seen from the first instance at once (its remembered schema would refuse "m")
      await other.renameColumn(bot, 'ChangingTable', 'n', 'm')
      expect(await found({ filter: { m: { $gt: 1 } } })).toMatchObject([{ k: 'b', m: 2 }])
      await expect(one.findRows(bot, 'ChangingTable', { filter: { n: { $gt: 1 } } })).rejects.toMatchObject({ type: 'InvalidQuery' })
      // deleted and created again under the same name: the new table's rows, not an empty answer from the old id
      await other.deleteTable(bot, 'ChangingTable')
      await expect(one.findRows(bot, 'ChangingTable', { filter: { k: 'a' } })).rejects.toMatchObject({ status: 404 })
      await other.createTable(bot, { name: 'ChangingTable', schema: { k: { type: 'string' } } } as never)
      await other.createRows(bot, 'ChangingTable', [{ k: 'new' }])
      expect(await found({ filter: { k: 'new' } })).toMatchObject([{ k: 'new' }])
      expect(await found({ filter: { k: 'a' } })).toEqual([])
    })

    it('importBatch: the rows and the job\'s cursor are written together; a holder that lost the lease inserts nothing', async () => {
      const bot = (await seed(store)).bot.id
      const t = tableRow(bot)
      await store.tables.createTable(t)
      await store.tables.createJob({ id: `job_i${seq}`, botId: bot, tableId: t.id, type: 'import', status: 'pending', progress: 0, params: { offset: 0 }, inputFileId: null, outputFileId: null, error: null, attempts: 0, createdAt: -1, updatedAt: -1 })
      // (the oldest job: claimJob takes it before the other tests' jobs)
      const now = 10 ** 13 + 1
      const claimed = await store.tables.claimJob('first', now, 1000)
      expect(claimed?.id).toBe(`job_i${seq}`)
      const rows = [rec({ n: 1 }), rec({ n: 2 }, 'k'), rec({ n: 3 }, 'k')]
      const batch = (owner: string, at: number) => store.tables.importBatch(t.id, rows, at, {
        id: claimed!.id, owner, leaseUntil: at + 1000,
        patch: (inserted) => ({ progress: 0.5, params: { offset: 3, duplicates: inserted.filter((r) => r === undefined).length } }),
      })
      const inserted = await batch('first', now)
      expect(inserted?.map((r) => r?.data)).toEqual([{ n: 1 }, { n: 2 }, undefined])
      expect((await store.tables.getJob(claimed!.id))?.params).toEqual({ offset: 3, duplicates: 1 })
      // the lease expires and another instance takes the job: the first one's next batch is refused whole
      expect((await store.tables.claimJob('second', now + 5000, 1000))?.id).toBe(claimed!.id)
      expect(await batch('first', now + 5001)).toBeUndefined()
      expect(await store.tables.countRows(t.id)).toBe(2)
      expect((await store.tables.getJob(claimed!.id))?.params).toEqual({ offset: 3, duplicates: 1 })
    })
  })
}
