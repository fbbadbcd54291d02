/**
 * Tables API jobs through `@botpress/client@1.45.0` on both backends: deletes by filter and of all
 * rows, imports (CSV and JSON files of the Files API), exports (a file with a download URL), all listed
 * by getTableJobs; and jobs queued while no worker ran, completed after a restart on the same data.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { tableName, waitForJob } from '../helpers/tables.js'
import { newDataPlace, startOn } from '../runtime/helpers.js'

const schema = { sku: { type: 'string' }, name: { type: 'string' }, price: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } }

describe('Tables API: jobs', () => {
  let h: Harness
  let client: Client
  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = await runtimeClient(h)
  })
  afterAll(async () => h?.close())

  it('deletes by filter and all rows as jobs, with the count', async () => {
    const table = tableName('del')
    await client.createTable({ name: table, schema })
    await client.createTableRows({ table, rows: Array.from({ length: 30 }, (_, i) => ({ name: `n${i}`, price: i })) })
    const r = await client.deleteTableRows({ table, filter: { price: { $gte: 10 } } })
    expect(r.deletedRows).toBe(20)
    expect(r.job).toMatchObject({ status: 'completed' })
    expect((await client.getTable({ table })).rows).toBe(10)
    const all = await client.deleteTableRows({ table, deleteAllRows: true })
    expect(all.deletedRows).toBe(10)
    const { jobs } = await client.getTableJobs({ table })
    expect(jobs.map((j) => [j.type, j.status])).toEqual([['delete_rows', 'completed'], ['delete_rows', 'completed']])
    await expect(client.deleteTableRows({ table, filter: { nope: 1 } })).rejects.toMatchObject({ code: 400 })
    await expect(client.deleteTableRows({ table })).rejects.toMatchObject({ code: 400 })
  })

  it('imports CSV and JSON files and exports to a file with a download URL', async () => {
    const table = tableName('imp')
    await client.createTable({ name: table, schema, keyColumn: 'sku' })
    const csv = 'sku,name,price,tags\r\na1,"Apple, red",1.5,"[""x"",""y""]"\nb2,Banana,2,\nc3,Cherry,notanumber,\n'
    const csvFile = await client.uploadFile({ key: `imports/${table}.csv`, content: csv, contentType: 'text/csv' })
    const { job } = await client.importTable({ table, fileId: csvFile.file.id })
    expect(job).toMatchObject({ type: 'import', inputFileId: csvFile.file.id, tableId: expect.any(String) })
    const done = await waitForJob(client, table, job.id)
    expect(done.status).toBe('completed')
    expect(done.error).toMatch(/1 of 3 rows refused; first: Row 2: column "price" must be of type number/)
    const rows = (await client.findTableRows({ table, orderBy: 'sku' })).rows
    expect(rows.map((r) => [r.sku, r.name, r.price, r.tags ?? null])).toEqual([['a1', 'Apple, red', 1.5, ['x', 'y']], ['b2', 'Banana', 2, null]])
    const json = JSON.stringify([{ sku: 'd4', name: 'Date', price: 4 }, { sku: 'a1', name: 'dup' }, 5])
    const jsonFile = await client.uploadFile({ key: `imports/${table}.json`, content: json, contentType: 'application/json' })
    const j2 = await waitForJob(client, table, (await client.importTable({ table, fileId: jsonFile.file.id })).job.id)
    expect(j2.error).toMatch(/2 of 3 rows refused/)
    expect((await client.getTable({ table })).rows).toBe(3)
    const bad = await client.uploadFile({ key: `imports/${table}-bad.json`, content: '[{"a":', contentType: 'application/json' })
    const j3 = await waitForJob(client, table, (await client.importTable({ table, fileId: bad.file.id })).job.id)
    expect(j3).toMatchObject({ status: 'failed', error: expect.stringMatching(/not a JSON array/) })

    for (const format of ['json', 'csv'] as const) {
      const exp = await client.exportTable({ table, format })
      const ended = await waitForJob(client, table, exp.job.id)
      expect(ended.status).toBe('completed')
      const { file } = await client.getFile({ id: ended.outputFileId! })
      const text = await (await fetch(file.url)).text()
      if (format === 'json') {
        expect((JSON.parse(text) as { sku: string }[]).map((r) => r.sku).sort()).toEqual(['a1', 'b2', 'd4'])
      } else {
        const lines = text.trim().split('\n')
        expect(lines[0]).toBe('id,createdAt,updatedAt,sku,name,price,tags')
        expect(lines).toHaveLength(4)
        expect(text).toContain('"Apple, red"')
      }
    }
  })
})

describe('Tables API: jobs across a restart', () => {
  it('runs jobs queued while no worker ran once the server restarts on the same data', async () => {
    const place = await newDataPlace()
    try {
      const first = await startOn(place, { tablesJobs: { workers: 0, pollMs: 50, leaseMs: 30_000 } })
      let table: string
      let ids: { del: string; exp: string; imp: string }
      try {
        const c1 = new Client({ apiUrl: first.baseUrl, token: (await new Client({ apiUrl: first.baseUrl, token: first.credentials.token, workspaceId: first.credentials.workspaceId }).createBotApiKey({ botId: first.credentials.botId, note: 't' })).value, botId: first.credentials.botId })
        table = tableName('restart')
        await c1.createTable({ name: table, schema })
        await c1.createTableRows({ table, rows: Array.from({ length: 50 }, (_, i) => ({ name: `n${i}`, price: i })) })
        const del = await c1.deleteTableRows({ table, filter: { price: { $lt: 20 } } })
        expect(del).toMatchObject({ deletedRows: 0, job: { status: 'pending' } })
        const exp = await c1.exportTable({ table, format: 'json' })
        const file = await c1.uploadFile({ key: 'restart.json', content: JSON.stringify([{ name: 'imported', price: 1000 }]) })
        const imp = await c1.importTable({ table, fileId: file.file.id })
        ids = { del: del.job!.id, exp: exp.job.id, imp: imp.job.id }
        expect((await c1.getTableJobs({ table })).jobs.map((j) => j.status)).toEqual(['pending', 'pending', 'pending'])
      } finally {
        await first.stop()
      }
      const second = await startOn(place)
      try {
        const c2 = new Client({ apiUrl: second.baseUrl, token: (await new Client({ apiUrl: second.baseUrl, token: second.credentials.token, workspaceId: second.credentials.workspaceId }).createBotApiKey({ botId: second.credentials.botId, note: 't' })).value, botId: second.credentials.botId })
        for (const id of Object.values(ids)) expect((await waitForJob(c2, table, id)).status).toBe('completed')
        const rows = (await c2.findTableRows({ table, limit: 1000 })).rows
        expect(rows.some((r) => r.name === 'imported')).toBe(true)
        expect(rows.filter((r) => typeof r.price === 'number' && r.price < 20)).toEqual([])
      } finally {
        await second.stop()
      }
    } finally {
      await place.remove()
    }
  }, 60_000)
})
