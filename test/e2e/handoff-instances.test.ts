/**
 * Human handoff across instances (PostgreSQL): two Parley apps, each with its own adapters (pool, LISTEN
 * connection) on one database, as two instances behind a load balancer. Agents claiming one handoff through
 * both at once: exactly one claim wins, every other answer is 409; the winner is the same whichever instance
 * is asked. PostgreSQL only: skipped in the SQLite pass (one process owns a SQLite file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { closeAdapters, createAdapters, type Adapters } from '../../src/compose.js'
import type { App } from '../../src/http/types.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { handoffFixture } from '../helpers/handoffs.js'
import { testStoreKind } from '../helpers/pg.js'

describe.skipIf(testStoreKind() !== 'postgres')('handoff claims across two instances on PostgreSQL', () => {
  let h: Harness
  let second: App
  let adapters: Adapters
  const agents: string[] = []

  beforeAll(async () => {
    h = await startParley()
    adapters = await createAdapters(h.config)
    second = await buildApp({ config: h.config, ...adapters, logger: false })
    await second.ready()
    for (let i = 0; i < 6; i++) {
      const res = await h.app.inject({
        method: 'POST', url: '/v1/admin/workspace-members',
        headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
        payload: { email: `racer-${i}-${Date.now()}@example.com`, role: 'agent' },
      })
      expect(res.statusCode, res.body).toBe(201)
      agents.push(JSON.parse(res.body).pat.value)
    }
  })
  afterAll(async () => {
    await second?.close()
    if (adapters) await closeAdapters(adapters)
    await h?.close()
  })

  it('agents on two instances race for one claim: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId)
      const claim = (app: App, token: string) => app.inject({
        method: 'POST', url: `/v1/admin/bots/${f.botId}/handoffs/${f.conversationId}/claim`,
        headers: { authorization: `Bearer ${token}`, 'x-workspace-id': h.credentials.workspaceId }, payload: {},
      })
      const results = await Promise.all(agents.map((token, i) => claim(i % 2 ? second : h.app, token)))
      const statuses = results.map((r) => r.statusCode)
      expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).toHaveLength(1)
      expect(statuses.filter((s) => s === 409)).toHaveLength(agents.length - 1)
      for (const r of results.filter((x) => x.statusCode === 409)) expect(JSON.parse(r.body)).toMatchObject({ code: 409, type: 'ResourceLockedConflict' })
      const winner = JSON.parse(results.find((r) => r.statusCode === 200)!.body).handoff.claimedBy.memberId
      for (const app of [h.app, second]) {
        const got = await app.inject({
          method: 'GET', url: `/v1/admin/bots/${f.botId}/handoffs/${f.conversationId}`,
          headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
        })
        expect(JSON.parse(got.body).handoff.claimedBy.memberId).toBe(winner)
      }
    }
  })
})
