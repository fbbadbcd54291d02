/**
 * Runtime API security: the authn/authz matrix over every runtime operation (RUNTIME_OPS in
 * runtime-ops.ts, which must have a row for every route the server registers under /v1/chat):
 * 401 for missing, forged, altered and revoked credentials and a missing or unknown
 * x-bot-id; 403 for another bot's API key, the billing role, and a viewer on writes; 404 for another
 * bot's and another workspace's resources; 413 past the 1 MB body limit. Every error has the Botpress body.
 * Then every operation × every key kind (issue #24): the bot's key, an integration key on its own installation,
 * on the bot's chat resources and on another installation's, the key of an integration installed elsewhere, a
 * Chat API user key, a PAT of each role, and no credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeBotScopeMatrix } from '../helpers/bot-scope-matrix.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { expectError, secondBot } from '../api/files-helpers.js'
import { uuidv7 } from '../../src/lib/ids.js'
import { ROLES } from '../../src/domain/permissions.js'
import { accountWithRole } from '../api/files-helpers.js'
import { createBotKey } from '../helpers/runtime-client.js'
import { matrixIntegrations, RUNTIME_OPS, runtimeFixture, type RuntimeIds, type RuntimeOp } from './runtime-ops.js'

describe('Runtime API security', () => {
  let h: Harness
  let integrations: Awaited<ReturnType<typeof matrixIntegrations>>
  beforeAll(async () => {
    h = await startParley({ listen: true })
    integrations = await matrixIntegrations(h, h.credentials.botId)
  })
  afterAll(async () => {
    await integrations?.close()
    await h?.close()
  })

  // The bot's chat resources; callAction names the `other` installation's action (not the `inst` key's).
  const { call, asBot, fresh } = describeBotScopeMatrix(() => h, RUNTIME_OPS, (harness, botId) => runtimeFixture(harness, botId, 'other:act'))

  it('the table has one row per Runtime operation the server registers (a new operation without a row fails here)', () => {
    const spec = h.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> }
    const registered = Object.entries(spec.paths).filter(([path]) => path.startsWith('/v1/chat/'))
      .flatMap(([, methods]) => Object.values(methods).map((m) => m.operationId!.replace(/^runtime(.)/, (_, c: string) => c.toLowerCase())))
    expect(registered.length).toBeGreaterThan(40)
    expect([...RUNTIME_OPS.map((o) => o.name)].sort()).toEqual([...registered].sort())
  })

  it('every operation × every key kind', async () => {
    const botKey = await createBotKey(h)
    const otherBotKey = await createBotKey(h, await secondBot(h))
    const roles = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, (await accountWithRole(h, role)).token] as const)))
    const chat = (await h.store.listIntegrations(h.credentials.botId)).find((i) => i.name === 'chat')!
    const userRes = await h.app.inject({ method: 'POST', url: `/${chat.webhookId}/users`, payload: {} })
    expect(userRes.statusCode, userRes.body).toBeLessThan(300)
    const userKey = userRes.json().key as string
    const botId = h.credentials.botId
    const chatIds = () => runtimeFixture(h, botId, 'other:act')
    const instIds = () => runtimeFixture(h, integrations.inst.scoped, 'inst:act')
    const bearer = (token: string | undefined) => ({ 'x-bot-id': botId, ...(token !== undefined && { authorization: `Bearer ${token}` }) })
    const scopedOp = (op: RuntimeOp) => op.installationScoped ?? op.scoped
    type Kind = { label: string; token: string | undefined; ids: () => Promise<RuntimeIds>; expect: (op: RuntimeOp) => number }
    const kinds: Kind[] = [
      { label: 'bot key', token: botKey.value, ids: chatIds, expect: () => 200 },
      ...ROLES.map((role): Kind => ({
        label: `PAT of a ${role}`, token: roles[role], ids: chatIds,
        expect: (op) => (['owner', 'administrator', 'manager', 'developer'].includes(role) || (role === 'viewer' && !op.write) ? 200 : 403),
      })),
      { label: 'integration key, its installation', token: integrations.inst.key, ids: instIds, expect: (op) => op.installationStatus ?? 200 },
      { label: 'integration key, the bot\'s chat resources', token: integrations.inst.key, ids: chatIds, expect: (op) => (scopedOp(op) ? op.foreignStatus ?? 404 : 200) },
      { label: 'integration key of another installation of the bot', token: integrations.other.key, ids: instIds, expect: (op) => (scopedOp(op) ? op.foreignStatus ?? 404 : 200) },
      { label: 'integration key of an integration installed on another bot', token: integrations.elsewhere.key, ids: instIds, expect: () => 403 },
      { label: 'another bot\'s key', token: otherBotKey.value, ids: chatIds, expect: () => 403 },
      { label: 'a Chat API user key', token: userKey, ids: chatIds, expect: () => 401 },
      { label: 'no credential', token: undefined, ids: chatIds, expect: () => 401 },
    ]
    const failures: string[] = []
    for (const kind of kinds) {
      let shared: RuntimeIds | undefined
      for (const op of RUNTIME_OPS) {
        const status = kind.expect(op)
        // A write that may succeed gets fresh resources (deletes consume theirs); reads and refused calls share a set.
        const ids = status === 200 && op.write ? await kind.ids() : (shared ??= await kind.ids())
        const res = await call(op, bearer(kind.token), ids)
        if (res.statusCode !== status) failures.push(`${op.name} with ${kind.label}: ${res.statusCode} (expected ${status}) ${res.body.slice(0, 160)}`)
        else if (status !== 200) expectError(res, status, { 401: 'Unauthorized', 403: 'Forbidden', 404: 'ResourceNotFound' }[status])
      }
    }
    expect(failures).toEqual([])
  }, 600_000)

  it('an integration key\'s lists hold its installation\'s resources only, and a refused write changes nothing', async () => {
    const key = integrations.inst.key
    const chatIds = await runtimeFixture(h, h.credentials.botId, 'other:act')
    const ownIds = await runtimeFixture(h, integrations.inst.scoped, 'inst:act')
    const list = async (path: string, field: string) => {
      const res = await h.app.inject({ method: 'GET', url: `/v1/chat${path}`, headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId } })
      expect(res.statusCode, res.body).toBe(200)
      return (res.json()[field] as { id: string }[]).map((x) => x.id)
    }
    const seen = [
      ...await list('/conversations?pageSize=100', 'conversations'), ...await list('/users?pageSize=100', 'users'),
      ...await list('/messages?pageSize=100', 'messages'), ...await list('/workflows?pageSize=100', 'workflows'), ...await list('/events?pageSize=100', 'events'),
    ]
    for (const id of [ownIds.conversationId, ownIds.userId, ownIds.messageId, ownIds.workflowId, ownIds.eventId]) expect(seen).toContain(id)
    for (const id of [chatIds.conversationId, chatIds.userId, chatIds.messageId, chatIds.workflowId, chatIds.eventId]) expect(seen).not.toContain(id)
    // The case: updateWorkflow on the bot's workflow set it `failed`. Now 404, and it is unchanged.
    const put = await h.app.inject({ method: 'PUT', url: `/v1/chat/workflows/${chatIds.workflowId}`, headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId }, payload: { status: 'failed' } })
    expectError(put, 404, 'ResourceNotFound')
    expect((await h.app.services.runtimeWorkflows.get((await h.store.getBot(h.credentials.botId))!, chatIds.workflowId)).status).toBe('pending')
  })

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
