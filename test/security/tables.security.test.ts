/**
 * Tables API security: the authn/authz matrix over every table operation (TABLE_OPS in tables-ops.ts,
 * test/helpers/bot-scope-matrix.ts): 401, 403; 404 for another bot's and another workspace's tables;
 * 413 past the 40 MB body limit. Every error has the Botpress body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeBotScopeMatrix } from '../helpers/bot-scope-matrix.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { expectError, secondBot } from '../api/files-helpers.js'
import { uuidv7 } from '../../src/lib/ids.js'
import { TABLE_OPS as RUNTIME_OPS, tableFixture as runtimeFixture } from './tables-ops.js'

describe('Tables API security', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  const { call, asBot, fresh } = describeBotScopeMatrix(() => h, RUNTIME_OPS, runtimeFixture)

  it('the operation table covers every Tables operation the server registers', () => {
    const doc = h.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> }
    const registered = Object.entries(doc.paths).filter(([path]) => path.startsWith('/v1/tables')).flatMap(([, methods]) => Object.values(methods).map((op) => op.operationId))
    expect(RUNTIME_OPS.map((o) => o.name).sort()).toEqual([...registered].sort())
    expect(RUNTIME_OPS).toHaveLength(17)
  })

  it('404: another bot\'s and another workspace\'s tables, by id and by name, and nothing of theirs changes', async () => {
    const sameWorkspace = await runtimeFixture(h, await secondBot(h))
    const now = Date.now()
    const workspaceId = uuidv7()
    await h.store.createWorkspace({ id: workspaceId, name: 'Elsewhere', createdAt: now, updatedAt: now })
    const otherWorkspace = await runtimeFixture(h, await secondBot(h, workspaceId))
    for (const theirs of [sameWorkspace, otherWorkspace]) {
      for (const op of RUNTIME_OPS.filter((o) => o.scoped && o.name !== 'getOrCreateTable')) {
        for (const ref of [theirs.tableId, theirs.tableName]) {
          const res = await call(op, asBot(), { ...theirs, tableId: ref, botId: h.credentials.botId })
          expect(res.statusCode, `${op.name} on another bot's table ${ref}: ${res.body}`).toBe(404)
          expectError(res, 404, 'ResourceNotFound')
        }
      }
      // getOrCreateTable by their name creates our own table; theirs is untouched.
      const mine = await call(RUNTIME_OPS.find((o) => o.name === 'getOrCreateTable')!, asBot(), theirs)
      expect(mine.json()).toMatchObject({ created: true })
      expect(mine.json().table.id).not.toBe(theirs.tableId)
      const still = await h.app.services.tables.getTable(theirs.botId, theirs.tableId)
      expect(still.rows).toBe(1)
      expect(still.table.definition.tags).toEqual({})
    }
    const lists = await h.app.inject({ method: 'GET', url: '/v1/tables', headers: asBot() })
    expect(lists.json().tables.some((t: { id: string }) => t.id === sameWorkspace.tableId || t.id === otherWorkspace.tableId)).toBe(false)
  })

  it('413: a body over 40 MB on every operation that takes one (and 2 MB is accepted)', async () => {
    const ids = await fresh()
    const big = { tags: { big: 'x'.repeat(40 * 1024 * 1024 + 10) } }
    const twoMb = await call(RUNTIME_OPS.find((o) => o.name === 'createTableRows')!, asBot(), ids, { rows: Array.from({ length: 600 }, (_, i) => ({ name: `r${i}`.padEnd(3500, '.'), n: i })) })
    expect(twoMb.statusCode, twoMb.body.slice(0, 200)).toBe(200)
    expect(twoMb.json().rows).toHaveLength(600)
    for (const op of RUNTIME_OPS.filter((o) => o.method !== 'GET')) {
      const res = await call(op, asBot(), ids, big)
      expect(res.statusCode, `${op.name}: ${res.body.slice(0, 200)}`).toBe(413)
      expectError(res, 413)
    }
  })
})
