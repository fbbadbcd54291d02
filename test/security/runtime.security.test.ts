/**
 * Runtime API security: the authn/authz matrix over every runtime operation (RUNTIME_OPS in
 * runtime-ops.ts): 401 for missing, forged, altered and revoked credentials and a missing or unknown
 * x-bot-id; 403 for another bot's API key, the billing role, and a viewer on writes; 404 for another
 * bot's and another workspace's resources; 413 past the 1 MB body limit. Every error has the Botpress body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeBotScopeMatrix } from '../helpers/bot-scope-matrix.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { expectError, secondBot } from '../api/files-helpers.js'
import { uuidv7 } from '../../src/lib/ids.js'
import { RUNTIME_OPS, runtimeFixture } from './runtime-ops.js'

describe('Runtime API security', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  const { call, asBot, fresh } = describeBotScopeMatrix(() => h, RUNTIME_OPS, runtimeFixture)

  it('404: another bot\'s and another workspace\'s conversations, users and messages, and nothing of theirs changes', async () => {
    const sameWorkspace = await runtimeFixture(h, await secondBot(h))
    const now = Date.now()
    const workspaceId = uuidv7()
    await h.store.createWorkspace({ id: workspaceId, name: 'Elsewhere', createdAt: now, updatedAt: now })
    const otherWorkspace = await runtimeFixture(h, await secondBot(h, workspaceId))
    for (const theirs of [sameWorkspace, otherWorkspace]) {
      for (const op of RUNTIME_OPS.filter((o) => o.scoped)) {
        // Their ids, but our bot as author where an author is named.
        const res = await call(op, asBot(), { ...theirs, botId: h.credentials.botId })
        expect(res.statusCode, `${op.name} on another bot's ids: ${res.body}`).toBe(404)
        expectError(res, 404, 'ResourceNotFound')
      }
      const owner = { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': theirs.botId }
      if (theirs === sameWorkspace) {
        const still = await h.app.inject({ method: 'GET', url: `/v1/chat/messages?conversationId=${theirs.conversationId}`, headers: owner })
        expect(still.json().messages.map((m: { id: string }) => m.id)).toEqual([theirs.messageId])
      }
    }
    // Lists never show them.
    const lists = await h.app.inject({ method: 'GET', url: '/v1/chat/conversations?pageSize=100', headers: asBot() })
    expect(lists.json().conversations.some((c: { id: string }) => c.id === sameWorkspace.conversationId || c.id === otherWorkspace.conversationId)).toBe(false)
  })

  it('413: a body over 1 MB on every operation that takes one', async () => {
    const ids = await fresh()
    const big = { tags: { big: 'x'.repeat(1024 * 1024 + 10) } }
    for (const op of RUNTIME_OPS.filter((o) => o.method !== 'GET')) {
      const res = await call(op, asBot(), ids, big)
      expect(res.statusCode, `${op.name}: ${res.body.slice(0, 200)}`).toBe(413)
      expectError(res, 413)
    }
  })
})
