/**
 * The authn/authz part of the security matrices of the APIs a bot calls with `Authorization: Bearer` +
 * `x-bot-id` (Runtime, Tables): every operation of a table called with the bot's own key (2xx), with
 * missing, forged, altered or revoked credentials or a missing or unknown x-bot-id (401), and with
 * another bot's key, the billing role and a viewer on writes (403; a viewer reads, a developer does
 * everything). Each API's file adds its own 404 (tenancy) and 413 (body limit) cases with `call`.
 */
import type { LightMyRequestResponse } from 'fastify'
import { expect, it } from 'vitest'
import type { Harness } from './harness.js'
import { accountWithRole, expectError, secondBot, type Headers } from '../api/files-helpers.js'
import { adminClient, createBotKey } from './runtime-client.js'

export interface MatrixOp<Ids> {
  name: string
  write: boolean
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  url: (ids: Ids) => string
  body?: (ids: Ids) => unknown
  /** Headers the operation needs on top of the credentials (e.g. x-integration-alias). */
  headers?: (ids: Ids) => Headers
}

export interface BotScopeMatrix<Ids> {
  /** One operation with these headers on these ids (`payload` instead of the operation's own body). */
  call(op: MatrixOp<Ids>, headers: Headers, ids: Ids, payload?: unknown): Promise<LightMyRequestResponse>
  /** The bot's own API key and x-bot-id, with `over` on top. */
  asBot(over?: Headers): Headers
  /** Fresh resources of the main bot for one pass over the operations. */
  fresh(): Promise<Ids>
}

/** Registers the 2xx, 401 and 403 cases over `ops`; call inside a describe whose beforeAll starts Parley. */
export function describeBotScopeMatrix<Ids>(
  harness: () => Harness,
  ops: readonly MatrixOp<Ids>[],
  fixture: (h: Harness, botId: string) => Promise<Ids>,
): BotScopeMatrix<Ids> {
  let botKey: { id: string; value: string } | undefined
  const h = harness
  const key = async () => (botKey ??= await createBotKey(h()))
  const matrix: BotScopeMatrix<Ids> = {
    call(op, headers, ids, payload) {
      const body = payload ?? op.body?.(ids)
      return h().app.inject({ method: op.method, url: op.url(ids), headers: { ...op.headers?.(ids), ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { payload: JSON.stringify(body) }) })
    },
    asBot: (over = {}) => ({ authorization: `Bearer ${botKey!.value}`, 'x-bot-id': h().credentials.botId, ...over }),
    fresh: () => fixture(h(), h().credentials.botId),
  }
  const { call, asBot, fresh } = matrix

  it('the bot\'s own API key may call every operation (2xx)', async () => {
    await key()
    for (const op of ops) {
      const res = await call(op, asBot(), await fresh())
      expect(res.statusCode, `${op.name}: ${res.body}`).toBe(200)
    }
  })

  it('401: no token, forged PAT, forged bot key, a flipped character, a revoked key, missing or unknown x-bot-id', async () => {
    const own = await key()
    const revoked = await createBotKey(h())
    await adminClient(h()).deleteBotApiKey({ id: revoked.id })
    const flipped = `${own.value.slice(0, -1)}${own.value.endsWith('A') ? 'B' : 'A'}`
    const botId = h().credentials.botId
    const cases: [string, Headers][] = [
      ['no token', { 'x-bot-id': botId }],
      ['forged PAT', { authorization: 'Bearer pat_forged0000000000000000000000000000000', 'x-bot-id': botId }],
      ['forged bot key', { authorization: 'Bearer bak_forged0000000000000000000000000000000', 'x-bot-id': botId }],
      ['flipped character', { authorization: `Bearer ${flipped}`, 'x-bot-id': botId }],
      ['revoked bot key', { authorization: `Bearer ${revoked.value}`, 'x-bot-id': botId }],
      ['missing x-bot-id', { authorization: `Bearer ${own.value}` }],
      ['unknown x-bot-id', { authorization: `Bearer ${h().credentials.token}`, 'x-bot-id': 'no-such-bot' }],
    ]
    const ids = await fresh()
    for (const op of ops) {
      for (const [label, headers] of cases) {
        const res = await call(op, headers, ids)
        expect(res.statusCode, `${op.name} with ${label}: ${res.body}`).toBe(401)
        expectError(res, 401, 'Unauthorized')
      }
    }
  })

  it('403: another bot\'s API key, the billing role on everything, a viewer on writes (reads are 200)', async () => {
    await key()
    const other = await secondBot(h())
    const otherKey = await createBotKey(h(), other)
    const billing = await accountWithRole(h(), 'billing')
    const viewer = await accountWithRole(h(), 'viewer')
    const ids = await fresh()
    for (const op of ops) {
      expectError(await call(op, asBot({ authorization: `Bearer ${otherKey.value}` }), ids), 403, 'Forbidden')
      expectError(await call(op, asBot({ authorization: `Bearer ${billing.token}` }), ids), 403, 'Forbidden')
      const res = await call(op, asBot({ authorization: `Bearer ${viewer.token}` }), ids)
      if (op.write) expectError(res, 403, 'Forbidden')
      else expect(res.statusCode, `${op.name} as viewer: ${res.body}`).toBe(200)
    }
    // A developer member's token works like the bot's key.
    const developer = await accountWithRole(h(), 'developer')
    for (const op of ops) {
      const res = await call(op, asBot({ authorization: `Bearer ${developer.token}` }), await fresh())
      expect(res.statusCode, `${op.name} as developer: ${res.body}`).toBe(200)
    }
  })

  return matrix
}
