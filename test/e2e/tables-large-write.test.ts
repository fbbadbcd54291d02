/**
 * Issue #24 item 8: one large Tables write (createTableRows, updateTableRows, upsertTableRows near the body
 * limit) is checked and written in slices that yield to the event loop, so other requests are served meanwhile.
 * Counted, not timed: a setImmediate probe counts the turns of the event loop while one write is in flight;
 * the write must let it run at least once per slice (WRITE_SLICE_BYTES of row JSON). Before, a 16 MB
 * write ran its checks and each SQLite batch in one synchronous stretch.
 */
import type { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WRITE_SLICE_BYTES } from '../../src/lib/slices.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { tableName } from '../helpers/tables.js'
import { turnsDuring } from '../helpers/event-loop.js'


describe('Tables: a large write yields to the event loop', () => {
  let h: Harness
  let client: Client
  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = await runtimeClient(h)
  })
  afterAll(async () => h?.close())

  it('createTableRows, updateTableRows and upsertTableRows of 16 MB each let the loop turn once per slice at least', async () => {
    const table = tableName('big')
    await client.createTable({ name: table, schema: { k: { type: 'string' }, s: { type: 'string' } }, factor: 10 })
    await client.updateTable({ table, keyColumn: 'k' })
    const rowChars = 40_000
    const rows = Array.from({ length: 400 }, (_, i) => ({ k: `k${i}`, s: String(i % 10).repeat(rowChars) }))
    const bytes = rows.length * (rowChars + 20)
    const slices = Math.floor(bytes / WRITE_SLICE_BYTES)
    expect(slices).toBeGreaterThanOrEqual(10)
    const inject = (method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>) => turnsDuring(() => h.app.inject({
      method, url, payload, headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': h.credentials.botId },
    }))

    const created = await inject('POST', `/v1/tables/${table}/rows`, { rows })
    expect(created.result.statusCode).toBe(200)
    const ids = (created.result.json() as { rows: { id: number }[] }).rows.map((r) => r.id)
    expect(ids).toHaveLength(400)
    expect(created.turns).toBeGreaterThanOrEqual(slices)

    const updated = await inject('PUT', `/v1/tables/${table}/rows`, { rows: ids.map((id) => ({ id, s: 'u'.repeat(rowChars) })) })
    expect(updated.result.statusCode).toBe(200)
    expect(updated.turns).toBeGreaterThanOrEqual(slices)

    const upserted = await inject('POST', `/v1/tables/${table}/rows/upsert`, { rows: rows.map((r) => ({ ...r, s: 'v'.repeat(rowChars) })), keyColumn: 'k' })
    expect(upserted.result.statusCode).toBe(200)
    expect((upserted.result.json() as { updated: unknown[] }).updated).toHaveLength(400)
    expect(upserted.turns).toBeGreaterThanOrEqual(slices)
    expect((await client.findTableRows({ table, filter: { s: { $regex: '^v' } }, limit: 1 })).rows).toHaveLength(1)
  })
})
