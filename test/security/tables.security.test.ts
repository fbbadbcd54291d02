/**
 * Tables API security: the authn/authz matrix over every runtime operation (RUNTIME_OPS in
 * runtime-ops.ts): 401 for missing, forged, altered and revoked credentials and a missing or unknown
 * x-bot-id; 403 for another bot's API key, the billing role, and a viewer on writes; 404 for another
 * bot's and another workspace's resources; 413 past the 1 MB body limit. Every error has the Botpress body.
 */
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { accountWithRole, expectError, secondBot, type Headers } from '../api/files-helpers.js'
import { adminClient, createBotKey } from '../helpers/runtime-client.js'
import { uuidv7 } from '../../src/lib/ids.js'
import { TABLE_OPS as RUNTIME_OPS, tableFixture as runtimeFixture, type TableIds as RuntimeIds, type TableOp as RuntimeOp } from './tables-ops.js'

describe('Tables API security', () => {
  let h: Harness
  let botKey: { id: string; value: string }
  const call = (op: RuntimeOp, headers: Headers, ids: RuntimeIds, payload?: unknown): Promise<LightMyRequestResponse> => {
    const body = payload ?? op.body?.(ids)
    return h.app.inject({ method: op.method, url: op.url(ids), headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { payload: JSON.stringify(body) }) })
  }
  const fresh = () => runtimeFixture(h, h.credentials.botId)
  const asBot = (over: Headers = {}): Headers => ({ authorization: `Bearer ${botKey.value}`, 'x-bot-id': h.credentials.botId, ...over })

  beforeAll(async () => {
    h = await startParley({ listen: true })
    botKey = await createBotKey(h)
  })
  afterAll(async () => h?.close())

  it('the operation table covers every Tables operation the server registers', () => {
    const doc = h.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> }
    const registered = Object.entries(doc.paths).filter(([path]) => path.startsWith('/v1/tables')).flatMap(([, methods]) => Object.values(methods).map((op) => op.operationId))
    expect(RUNTIME_OPS.map((o) => o.name).sort()).toEqual([...registered].sort())
    expect(RUNTIME_OPS).toHaveLength(17)
  })

  it('the bot\'s own API key may call every operation (2xx)', async () => {
    for (const op of RUNTIME_OPS) {
      const res = await call(op, asBot(), await fresh())
      expect(res.statusCode, `${op.name}: ${res.body}`).toBe(200)
    }
  })

  it('401: no token, forged PAT, forged bot key, a flipped character, a revoked key, missing or unknown x-bot-id', async () => {
    const revoked = await createBotKey(h)
    await adminClient(h).deleteBotApiKey({ id: revoked.id })
    const flipped = `${botKey.value.slice(0, -1)}${botKey.value.endsWith('A') ? 'B' : 'A'}`
    const botId = h.credentials.botId
    const cases: [string, Headers][] = [
      ['no token', { 'x-bot-id': botId }],
      ['forged PAT', { authorization: 'Bearer pat_forged0000000000000000000000000000000', 'x-bot-id': botId }],
      ['forged bot key', { authorization: 'Bearer bak_forged0000000000000000000000000000000', 'x-bot-id': botId }],
      ['flipped character', { authorization: `Bearer ${flipped}`, 'x-bot-id': botId }],
      ['revoked bot key', { authorization: `Bearer ${revoked.value}`, 'x-bot-id': botId }],
      ['missing x-bot-id', { authorization: `Bearer ${botKey.value}` }],
      ['unknown x-bot-id', { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': 'no-such-bot' }],
    ]
    const ids = await fresh()
    for (const op of RUNTIME_OPS) {
      for (const [label, headers] of cases) {
        const res = await call(op, headers, ids)
        expect(res.statusCode, `${op.name} with ${label}: ${res.body}`).toBe(401)
        expectError(res, 401, 'Unauthorized')
      }
    }
  })

  it('403: another bot\'s API key, the billing role on everything, a viewer on writes (reads are 200)', async () => {
    const other = await secondBot(h)
    const otherKey = await createBotKey(h, other)
    const billing = await accountWithRole(h, 'billing')
    const viewer = await accountWithRole(h, 'viewer')
    const ids = await fresh()
    for (const op of RUNTIME_OPS) {
      expectError(await call(op, asBot({ authorization: `Bearer ${otherKey.value}` }), ids), 403, 'Forbidden')
      expectError(await call(op, asBot({ authorization: `Bearer ${billing.token}` }), ids), 403, 'Forbidden')
      const res = await call(op, asBot({ authorization: `Bearer ${viewer.token}` }), ids)
      if (op.write) expectError(res, 403, 'Forbidden')
      else expect(res.statusCode, `${op.name} as viewer: ${res.body}`).toBe(200)
    }
    // A developer member's token works like the bot's key.
    const developer = await accountWithRole(h, 'developer')
    for (const op of RUNTIME_OPS) {
      const res = await call(op, asBot({ authorization: `Bearer ${developer.token}` }), await fresh())
      expect(res.statusCode, `${op.name} as developer: ${res.body}`).toBe(200)
    }
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
