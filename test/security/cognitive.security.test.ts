/**
 * v2 cognitive API security (docs/llm.md): the authn/authz matrix over its three operations
 * (test/helpers/bot-scope-matrix.ts: 2xx, 401, 403), and the same answers as the Runtime API for another bot's key,
 * another workspace's bot, a PAT without x-bot-id and an integration's key. The provider is the LLM stand-in
 * (test/helpers/llm-stand-in.ts; no model can run here); no refused call reaches it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeBotScopeMatrix, type MatrixOp } from '../helpers/bot-scope-matrix.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { providersFile, startLlmStandIn, type LlmStandIn } from '../helpers/llm-stand-in.js'
import { accountWithRole, botApiKey, secondBot, type Headers } from '../api/files-helpers.js'
import { uuidv7 } from '../../src/lib/ids.js'

const hi = { messages: [{ role: 'user', content: 'hi' }] }
type Ids = Record<string, never>
const OPS: MatrixOp<Ids>[] = [
  { name: 'generateText', write: true, method: 'POST', url: () => '/v2/cognitive/generate-text', body: () => hi },
  { name: 'generateTextStream', write: true, method: 'POST', url: () => '/v2/cognitive/generate-text-stream', body: () => hi },
  { name: 'listModels', write: false, method: 'GET', url: () => '/v2/cognitive/models' },
]
/** The Runtime API operation each is compared with (same permission: a write, a read). */
const RUNTIME_TWIN: Record<string, MatrixOp<Ids>> = {
  write: { name: 'trackAnalytics', write: true, method: 'POST', url: () => '/v1/chat/analytics', body: () => ({ name: 'x', count: 1 }) },
  read: { name: 'listConversations', write: false, method: 'GET', url: () => '/v1/chat/conversations' },
}

describe('v2 cognitive API security', () => {
  let h: Harness
  let standIn: LlmStandIn
  beforeAll(async () => {
    standIn = await startLlmStandIn()
    h = await startParley({ listen: true, env: { PARLEY_LLM_PROVIDERS_FILE: providersFile([{ name: 'local', url: standIn.url, models: ['m'] }]) } })
  })
  afterAll(async () => {
    await h?.close()
    await standIn?.close()
  })

  const { call, asBot } = describeBotScopeMatrix(() => h, OPS, async () => ({}))

  it('the operation table covers every cognitive operation the server registers', () => {
    const doc = h.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> }
    const registered = Object.entries(doc.paths).filter(([path]) => path.startsWith('/v2/cognitive')).flatMap(([, methods]) => Object.values(methods).map((op) => op.operationId))
    expect(OPS.map((o) => o.name).sort()).toEqual([...registered].sort())
  })

  it('the same answers as the Runtime API: another workspace\'s bot, its key, an outsider\'s PAT, a PAT without x-bot-id, an integration\'s key', async () => {
    const now = Date.now()
    const workspaceId = uuidv7()
    await h.store.createWorkspace({ id: workspaceId, name: 'Elsewhere', createdAt: now, updatedAt: now })
    const elsewhere = await secondBot(h, workspaceId)
    const elsewhereKey = await botApiKey(h, elsewhere)
    const outsider = await accountWithRole(h, null)
    const cases: [string, Headers][] = [
      ['owner PAT on another workspace\'s bot', asBot({ authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': elsewhere })],
      ['another workspace\'s bot key on this bot', asBot({ authorization: `Bearer ${elsewhereKey}` })],
      ['an outsider\'s PAT', asBot({ authorization: `Bearer ${outsider.token}` })],
      ['a PAT without x-bot-id', { authorization: `Bearer ${h.credentials.token}` }],
      ['a forged integration key', asBot({ authorization: 'Bearer iak_forged000000000000000000000000000000' })],
    ]
    const before = standIn.requests.length
    for (const [label, headers] of cases) {
      for (const op of OPS) {
        const twin = RUNTIME_TWIN[op.write ? 'write' : 'read']!
        const [ours, theirs] = [await call(op, headers, {}), await call(twin, headers, {})]
        expect(theirs.statusCode, `${twin.name} with ${label}`).toBeGreaterThanOrEqual(400)
        expect([ours.statusCode, ours.json().type], `${op.name} with ${label}: ${ours.body}`).toEqual([theirs.statusCode, theirs.json().type])
      }
    }
    expect(standIn.requests.length).toBe(before)
  })
})
