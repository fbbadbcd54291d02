/**
 * Admin API security, table-driven over every Admin operation:
 * - credentials: missing, malformed, forged, oversized, revoked tokens → 401; bot API keys → 403;
 * - workspace header: missing or unknown → 401, not a member → 403 (workspace-scoped routes);
 * - roles: billing, viewer, developer, manager, administrator, owner allowed/denied exactly as the
 *   ROLE_PERMISSIONS table in src/domain/permissions.ts says (denied → 403 Forbidden);
 * - secrets hidden from read-only roles, other workspaces' resources invisible (404), listings isolated;
 * - error bodies always `{ id, code, type, message }` with code == HTTP status;
 * - the 50 MB Admin body limit, also on a real socket.
 */
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatClient } from '../helpers/chat-client.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { can, type Permission } from '../../src/domain/permissions.js'
import { ISO_Z } from '../helpers/formats.js'
import { handoffFixture } from '../helpers/handoffs.js'
import { injectStream } from '../helpers/admin-client.js'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
type Role = 'billing' | 'viewer' | 'developer' | 'manager' | 'administrator' | 'owner'
const ROLES: Role[] = ['billing', 'viewer', 'developer', 'manager', 'administrator', 'owner']
const rank = (r: Role) => ROLES.indexOf(r)

interface Res {
  status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  text: string
}

interface Req {
  method: Method
  path: string
  body?: unknown
  /** A Server-Sent Events operation: a 200 is closed once its headers came. */
  stream?: boolean
}

/** Headers for one call: an exact Authorization value (or none) and an x-workspace-id (or none). */
interface Creds {
  authorization?: string | undefined
  workspaceId?: string | undefined
}

interface Ctx {
  /** Workspace the request targets (fixtures are created there by the bootstrap owner). */
  ws: string
  /** A token whose account owns caller-owned fixtures (personal access tokens). */
  selfToken: string
}

/**
 * Every Admin operation. `scope`: account routes need only a valid personal access token;
 * `path` routes address a workspace by path id; `workspace` routes need x-workspace-id.
 * `minRole`: the lowest role allowed (account routes: any account).
 */
interface Op {
  name: string
  scope: 'account' | 'path' | 'workspace'
  minRole: Role
  permission?: Permission
  ok: number
  prepare(ctx: Ctx): Promise<Req>
}

let seq = 0
const freshEmail = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}@example.com`

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The Botpress error body: exactly id, code, type, message (+ optional metadata), code == status. */
function expectError(res: Res, status: number, type: string): void {
  expect(res.status, res.text.slice(0, 400)).toBe(status)
  expect(res.body).toMatchObject({ code: status, type })
  expect(typeof res.body.id).toBe('string')
  expect(res.body.id.length).toBeGreaterThan(0)
  expect(typeof res.body.message).toBe('string')
  expect(res.body.message.length).toBeGreaterThan(0)
  for (const key of Object.keys(res.body)) expect(['id', 'code', 'type', 'message', 'metadata']).toContain(key)
}

describe('Admin API security', () => {
  let h: Harness
  let ownerToken: string
  let ownerId: string
  /** One account per role (each is that role in the demo workspace) with its first token. */
  const roleAccounts = {} as Record<Role, { id: string; email: string; token: string }>
  /** A valid account that is not a member of the demo workspace. */
  let outsider: { id: string; token: string; ws: string }
  let botKey: string
  let revokedToken: string

  async function send(req: Req, creds: Creds): Promise<Res> {
    const headers: Record<string, string> = {}
    if (creds.authorization !== undefined) headers.authorization = creds.authorization
    if (creds.workspaceId !== undefined) headers['x-workspace-id'] = creds.workspaceId
    const body = req.body !== undefined ? req.body : req.method === 'DELETE' ? {} : undefined
    if (req.stream) return injectStream(h.app, { method: req.method, url: `/v1/admin${req.path}`, headers })
    const res = await h.app.inject({
      method: req.method,
      url: `/v1/admin${req.path}`,
      headers,
      ...(body !== undefined && { payload: body as Record<string, unknown> }),
    })
    return { status: res.statusCode, body: parse(res.body), text: res.body }
  }

  /** A call as the bootstrap owner; must succeed. */
  async function asOwner(method: Method, path: string, body?: unknown, ws = h.credentials.workspaceId): Promise<Res['body']> {
    const res = await send({ method, path, ...(body !== undefined && { body }) }, { authorization: `Bearer ${ownerToken}`, workspaceId: ws })
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
    return res.body
  }

  const newBot = async (ws: string) => (await asOwner('POST', '/bots', { name: 'fixture' }, ws)).bot.id as string
  let integrationCount = 0
  const newIntegration = async (ws: string) => (await asOwner('POST', '/integrations', { name: `fixture-${++integrationCount}`, version: '1.0.0' }, ws)).integration.id as string

  const OPS: Op[] = [
    { name: 'getAccount', scope: 'account', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'GET', path: '/account/me' }) },
    { name: 'listPersonalAccessTokens', scope: 'account', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'GET', path: '/account/pats' }) },
    { name: 'createConsoleSignInLink', scope: 'account', minRole: 'billing', ok: 201, prepare: async () => ({ method: 'POST', path: '/account/console-links', body: {} }) },
    { name: 'listConsoleSessions', scope: 'account', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'GET', path: '/account/console-sessions' }) },
    {
      name: 'revokeConsoleSession', scope: 'account', minRole: 'billing', ok: 200,
      prepare: async ({ selfToken }) => {
        const signed = await h.app.inject({ method: 'POST', url: '/console/session', headers: { 'x-parley-console': '1' }, payload: { token: selfToken } })
        expect(signed.statusCode, signed.body).toBe(200)
        const listed = await send({ method: 'GET', path: '/account/console-sessions' }, { authorization: `Bearer ${selfToken}` })
        return { method: 'DELETE', path: `/account/console-sessions/${listed.body.sessions[0].id}` }
      },
    },
    { name: 'revokeConsoleSessions', scope: 'account', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'DELETE', path: '/account/console-sessions', body: {} }) },
    {
      name: 'createPersonalAccessToken', scope: 'account', minRole: 'billing', ok: 201,
      prepare: async () => ({ method: 'POST', path: '/account/pats', body: { note: 'matrix' } }),
    },
    {
      name: 'deletePersonalAccessToken', scope: 'account', minRole: 'billing', ok: 200,
      prepare: async ({ selfToken }) => {
        const res = await send({ method: 'POST', path: '/account/pats', body: { note: 'to delete' } }, { authorization: `Bearer ${selfToken}` })
        expect(res.status).toBe(201)
        return { method: 'DELETE', path: `/account/pats/${res.body.pat.id}` }
      },
    },
    { name: 'listWorkspaces', scope: 'account', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'GET', path: '/workspaces' }) },
    { name: 'checkHandleAvailability', scope: 'account', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'PUT', path: '/workspaces/handle-availability', body: { handle: 'matrix-handle' } }) },
    { name: 'createWorkspace', scope: 'account', minRole: 'billing', ok: 201, prepare: async () => ({ method: 'POST', path: '/workspaces', body: { name: 'matrix ws' } }) },
    { name: 'getWorkspace', scope: 'path', minRole: 'billing', permission: 'workspace.read', ok: 200, prepare: async ({ ws }) => ({ method: 'GET', path: `/workspaces/${ws}` }) },
    {
      name: 'updateWorkspace', scope: 'path', minRole: 'administrator', permission: 'workspace.update', ok: 200,
      prepare: async ({ ws }) => ({ method: 'PUT', path: `/workspaces/${ws}`, body: { name: 'renamed' } }),
    },
    {
      name: 'deleteWorkspace', scope: 'path', minRole: 'owner', permission: 'workspace.delete', ok: 200,
      prepare: async ({ ws }) => ({ method: 'DELETE', path: `/workspaces/${ws}` }),
    },
    {
      name: 'listWorkspaceMembers', scope: 'workspace', minRole: 'billing', permission: 'members.read', ok: 200,
      prepare: async () => ({ method: 'GET', path: '/workspace-members' }),
    },
    { name: 'getWorkspaceMember', scope: 'workspace', minRole: 'billing', ok: 200, prepare: async () => ({ method: 'GET', path: '/workspace-members/me' }) },
    {
      name: 'createWorkspaceMember', scope: 'workspace', minRole: 'administrator', permission: 'members.write', ok: 201,
      prepare: async () => ({ method: 'POST', path: '/workspace-members', body: { email: freshEmail('matrix-new'), role: 'viewer' } }),
    },
    {
      name: 'updateWorkspaceMember', scope: 'workspace', minRole: 'administrator', permission: 'members.write', ok: 200,
      prepare: async ({ ws }) => {
        const m = await asOwner('POST', '/workspace-members', { email: freshEmail('matrix-target'), role: 'viewer' }, ws)
        return { method: 'PUT', path: `/workspace-members/${m.id}`, body: { role: 'billing' } }
      },
    },
    {
      name: 'deleteWorkspaceMember', scope: 'workspace', minRole: 'administrator', permission: 'members.write', ok: 200,
      prepare: async ({ ws }) => {
        const m = await asOwner('POST', '/workspace-members', { email: freshEmail('matrix-target'), role: 'viewer' }, ws)
        return { method: 'DELETE', path: `/workspace-members/${m.id}` }
      },
    },
    { name: 'listBots', scope: 'workspace', minRole: 'viewer', permission: 'bots.list', ok: 200, prepare: async () => ({ method: 'GET', path: '/bots' }) },
    {
      name: 'getBot', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}` }),
    },
    { name: 'createBot', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 201, prepare: async () => ({ method: 'POST', path: '/bots', body: { name: 'new' } }) },
    {
      name: 'updateBot', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200,
      prepare: async ({ ws }) => ({ method: 'PUT', path: `/bots/${await newBot(ws)}`, body: { name: 'changed', tags: { env: 'x' } } }),
    },
    {
      name: 'deleteBot', scope: 'workspace', minRole: 'manager', permission: 'bots.delete', ok: 200,
      prepare: async ({ ws }) => ({ method: 'DELETE', path: `/bots/${await newBot(ws)}` }),
    },
    {
      name: 'getBotLogs', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/logs` }),
    },
    {
      name: 'getBotWebchat', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/webchat?type=sharableUrl` }),
    },
    {
      name: 'getBotAnalytics', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/analytics?startDate=2026-01-01&endDate=2026-01-31` }),
    },
    {
      name: 'getBotQualityAnalytics', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/analytics/quality?startDate=2026-01-01&endDate=2026-01-31` }),
    },
    // LLM budgets (issue #28; docs/llm-usage.md): a bot's as its configuration, the workspace's as the workspace.
    {
      name: 'getBotLlmBudget', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/llm-budget` }),
    },
    {
      name: 'updateBotLlmBudget', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200,
      prepare: async ({ ws }) => ({ method: 'PUT', path: `/bots/${await newBot(ws)}/llm-budget`, body: { dailyTokens: 1000 } }),
    },
    {
      name: 'getWorkspaceLlmBudget', scope: 'workspace', minRole: 'billing', permission: 'workspace.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/workspaces/${ws}/llm-budget` }),
    },
    {
      name: 'updateWorkspaceLlmBudget', scope: 'workspace', minRole: 'administrator', permission: 'workspace.update', ok: 200,
      prepare: async ({ ws }) => ({ method: 'PUT', path: `/workspaces/${ws}/llm-budget`, body: { dailyCost: 5 } }),
    },
    // Human handoff (the `agent` role's own matrix: handoffs.security.test.ts).
    {
      name: 'listBotHandoffs', scope: 'workspace', minRole: 'viewer', permission: 'handoffs.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${(await handoffFixture(h, ownerToken, ws)).botId}/handoffs?status=waiting` }),
    },
    {
      name: 'getBotHandoff', scope: 'workspace', minRole: 'viewer', permission: 'handoffs.read', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws)
        return { method: 'GET', path: `/bots/${f.botId}/handoffs/${f.conversationId}` }
      },
    },
    {
      name: 'getBotHandoffStats', scope: 'workspace', minRole: 'viewer', permission: 'handoffs.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/handoffs/stats?startDate=2026-01-01&endDate=2026-01-31` }),
    },
    {
      name: 'createBotHandoff', scope: 'workspace', minRole: 'developer', permission: 'handoffs.write', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws, { open: false })
        return { method: 'POST', path: `/bots/${f.botId}/handoffs`, body: { conversationId: f.conversationId } }
      },
    },
    {
      name: 'claimBotHandoff', scope: 'workspace', minRole: 'developer', permission: 'handoffs.write', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws)
        return { method: 'POST', path: `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, body: {} }
      },
    },
    {
      name: 'createBotHandoffMessage', scope: 'workspace', minRole: 'developer', permission: 'handoffs.write', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws)
        return { method: 'POST', path: `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, body: { type: 'text', payload: { text: 'hello' } } }
      },
    },
    {
      name: 'createBotHandoffFileUpload', scope: 'workspace', minRole: 'developer', permission: 'handoffs.write', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws)
        return { method: 'POST', path: `/bots/${f.botId}/handoffs/${f.conversationId}/files`, body: { name: 'a.txt', contentType: 'text/plain', size: 5 } }
      },
    },
    {
      name: 'endBotHandoff', scope: 'workspace', minRole: 'developer', permission: 'handoffs.write', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws)
        return { method: 'POST', path: `/bots/${f.botId}/handoffs/${f.conversationId}/end`, body: {} }
      },
    },
    {
      name: 'listBotConversations', scope: 'workspace', minRole: 'viewer', permission: 'conversations.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/conversations?q=hello` }),
    },
    {
      name: 'getBotConversationTranscript', scope: 'workspace', minRole: 'viewer', permission: 'conversations.read', ok: 200,
      prepare: async ({ ws }) => {
        const botId = await newBot(ws)
        const bot = (await asOwner('GET', `/bots/${botId}`, undefined, ws)).bot as { integrations: Record<string, { webhookId: string }> }
        const chat = new ChatClient(h.app, bot.integrations.chat!.webhookId, '')
        const { key } = await chat.createUser({})
        const conversation = await chat.createConversation(key)
        return { method: 'GET', path: `/bots/${botId}/conversations/${conversation.id}/transcript` }
      },
    },
    {
      name: 'listenBotConversation', scope: 'workspace', minRole: 'viewer', permission: 'conversations.read', ok: 200,
      prepare: async ({ ws }) => {
        const f = await handoffFixture(h, ownerToken, ws, { open: false })
        return { method: 'GET', path: `/bots/${f.botId}/conversations/${f.conversationId}/listen`, stream: true }
      },
    },
    {
      name: 'exportBotConversations', scope: 'workspace', minRole: 'viewer', permission: 'conversations.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/${await newBot(ws)}/export?format=csv` }),
    },
    {
      name: 'createBotApiKey', scope: 'workspace', minRole: 'developer', permission: 'bots.keys', ok: 201,
      prepare: async ({ ws }) => ({ method: 'POST', path: '/bots/baks', body: { botId: await newBot(ws), note: 'k' } }),
    },
    {
      name: 'listBotApiKeys', scope: 'workspace', minRole: 'developer', permission: 'bots.keys', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/bots/baks?botId=${await newBot(ws)}` }),
    },
    {
      name: 'deleteBotApiKey', scope: 'workspace', minRole: 'developer', permission: 'bots.keys', ok: 200,
      prepare: async ({ ws }) => {
        const key = await asOwner('POST', '/bots/baks', { botId: await newBot(ws) }, ws)
        return { method: 'DELETE', path: `/bots/baks/${key.id}` }
      },
    },
    // Integration definitions (issue #19): workspace-private, like bots.
    {
      name: 'createIntegration', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 201,
      prepare: async () => ({ method: 'POST', path: '/integrations', body: { name: `matrix-${++integrationCount}`, version: '1.0.0' } }),
    },
    { name: 'listIntegrations', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async () => ({ method: 'GET', path: '/integrations' }) },
    // `bp deploy` (issue #26): the hub, interfaces and plugins.
    { name: 'getPublicIntegration', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async () => ({ method: 'GET', path: '/hub/integrations/chat/0.7.6' }) },
    { name: 'getPublicIntegrationById', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async () => ({ method: 'GET', path: '/hub/integrations/parley-builtin-webhook' }) },
    ...(['interface', 'plugin'] as const).flatMap((kind): Op[] => {
      const Kind = kind === 'interface' ? 'Interface' : 'Plugin'
      const plural = `${kind}s`
      const create = async (ws: string, visibility = 'private') => (await asOwner('POST', `/${plural}`, { name: `matrix-${kind}-${++integrationCount}`, version: '1.0.0', visibility }, ws))[kind] as { id: string; name: string }
      return [
        { name: `create${Kind}`, scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 201, prepare: async () => ({ method: 'POST', path: `/${plural}`, body: { name: `matrix-${kind}-${++integrationCount}`, version: '1.0.0' } }) },
        { name: `update${Kind}`, scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200, prepare: async ({ ws }) => ({ method: 'PUT', path: `/${plural}/${(await create(ws)).id}`, body: { title: 'changed' } }) },
        { name: `get${Kind}`, scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async ({ ws }) => ({ method: 'GET', path: `/${plural}/${(await create(ws)).id}` }) },
        { name: `get${Kind}ByName`, scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async ({ ws }) => ({ method: 'GET', path: `/${plural}/${(await create(ws)).name}/1.0.0` }) },
        { name: `getPublic${Kind}`, scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async ({ ws }) => ({ method: 'GET', path: `/hub/${plural}/${(await create(ws, 'public')).name}/1.0.0` }) },
        { name: `getPublic${Kind}ById`, scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200, prepare: async ({ ws }) => ({ method: 'GET', path: `/hub/${plural}/${(await create(ws, 'public')).id}` }) },
      ]
    }),
    {
      name: 'getIntegration', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/integrations/${await newIntegration(ws)}` }),
    },
    {
      name: 'getIntegrationByName', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => {
        const id = await newIntegration(ws)
        const { integration } = await asOwner('GET', `/integrations/${id}`, undefined, ws)
        return { method: 'GET', path: `/integrations/${integration.name}/1.0.0` }
      },
    },
    {
      name: 'updateIntegration', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200,
      prepare: async ({ ws }) => ({ method: 'PUT', path: `/integrations/${await newIntegration(ws)}`, body: { title: 'changed' } }),
    },
    // `bp deploy --dryRun` (issue #26): the checks of createIntegration/updateIntegration, nothing written.
    {
      name: 'validateIntegrationCreation', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200,
      prepare: async () => ({ method: 'POST', path: '/integrations/validate', body: { name: `matrix-${++integrationCount}`, version: '1.0.0' } }),
    },
    {
      name: 'validateIntegrationUpdate', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200,
      prepare: async ({ ws }) => ({ method: 'PUT', path: `/integrations/${await newIntegration(ws)}/validate`, body: { title: 'changed' } }),
    },
    {
      name: 'deleteIntegration', scope: 'workspace', minRole: 'developer', permission: 'bots.write', ok: 200,
      prepare: async ({ ws }) => ({ method: 'DELETE', path: `/integrations/${await newIntegration(ws)}` }),
    },
    {
      name: 'getIntegrationLogs', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/integrations/${await newIntegration(ws)}/logs?timeStart=2026-01-01T00:00:00Z` }),
    },
    {
      name: 'createIntegrationApiKey', scope: 'workspace', minRole: 'developer', permission: 'bots.keys', ok: 201,
      prepare: async ({ ws }) => ({ method: 'POST', path: '/integrations/iaks', body: { integrationId: await newIntegration(ws), note: 'k' } }),
    },
    {
      name: 'listIntegrationApiKeys', scope: 'workspace', minRole: 'developer', permission: 'bots.keys', ok: 200,
      prepare: async ({ ws }) => ({ method: 'GET', path: `/integrations/iaks?integrationId=${await newIntegration(ws)}` }),
    },
    {
      name: 'deleteIntegrationApiKey', scope: 'workspace', minRole: 'developer', permission: 'bots.keys', ok: 200,
      prepare: async ({ ws }) => {
        const key = await asOwner('POST', '/integrations/iaks', { integrationId: await newIntegration(ws) }, ws)
        return { method: 'DELETE', path: `/integrations/iaks/${key.id}` }
      },
    },
    {
      // Parley: an installation's health check (an unreachable url answers 200 { ok: false }).
      name: 'pingBotIntegration', scope: 'workspace', minRole: 'viewer', permission: 'bots.read', ok: 200,
      prepare: async ({ ws }) => {
        const integrationId = await newIntegration(ws)
        await asOwner('PUT', `/integrations/${integrationId}`, { url: 'http://127.0.0.1:9/' }, ws)
        const botId = await newBot(ws)
        await asOwner('PUT', `/bots/${botId}`, { integrations: { pinged: { integrationId, enabled: true } } }, ws)
        return { method: 'POST', path: `/bots/${botId}/integrations/pinged/ping` }
      },
    },
  ]

  beforeAll(async () => {
    // pingBotIntegration's fixture installs an integration at a closed port: updateBot waits for its register, retried
    // within PARLEY_REMOTE_BOT_TIMEOUT_MS (10 s by default, ~7.5 s of retries per case); a short wait gives the same answers.
    h = await startParley({ env: { PARLEY_REMOTE_BOT_TIMEOUT_MS: '300' } })
    ownerToken = h.credentials.token
    ownerId = (await asOwner('GET', '/account/me')).account.id
    for (const role of ROLES) {
      const email = freshEmail(`role-${role}`)
      const m = await asOwner('POST', '/workspace-members', { email, role })
      roleAccounts[role] = { id: m.id, email, token: m.pat.value }
    }
    const outsiderWs = (await asOwner('POST', '/workspaces', { name: 'outsider home' })).id as string
    const o = await asOwner('POST', '/workspace-members', { email: freshEmail('outsider'), role: 'owner' }, outsiderWs)
    outsider = { id: o.id, token: o.pat.value, ws: outsiderWs }
    botKey = (await asOwner('POST', '/bots/baks', { botId: h.credentials.botId, note: 'security' })).value
    const revoked = (await asOwner('POST', '/account/pats', { note: 'revoked' })).pat
    await asOwner('DELETE', `/account/pats/${revoked.id}`)
    revokedToken = revoked.value
  })
  afterAll(async () => h?.close())

  it('the operation table covers every Admin operation the server registers, and agrees with the PERMISSIONS table', () => {
    const doc = h.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> }
    const registered = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/admin/'))
      .flatMap(([, methods]) => Object.values(methods).map((op) => op.operationId))
    expect(OPS.map((o) => o.name).sort()).toEqual([...registered].sort())
    expect(new Set(OPS.map((o) => o.name)).size).toBe(OPS.length)
    expect(OPS.length).toBeGreaterThanOrEqual(22)
    // Over the linear roles (the `agent` role has its own matrix: handoffs.security.test.ts), the roles allowed are the ones from minRole up.
    for (const op of OPS) if (op.permission) for (const role of ROLES) expect(can(role, op.permission), `${op.name} as ${role}`).toBe(rank(role) >= rank(op.minRole))
  })

  describe('invalid credentials on every operation', () => {
    const validPatShape = `pat_${'A'.repeat(43)}`
    const badCredentials: [string, () => string | undefined, number, string][] = [
      ['no Authorization header', () => undefined, 401, 'Unauthorized'],
      ['an empty Authorization header', () => '', 401, 'Unauthorized'],
      ['"Bearer" with nothing', () => 'Bearer', 401, 'Unauthorized'],
      ['"Bearer " with nothing after the space', () => 'Bearer ', 401, 'Unauthorized'],
      ['a garbage token', () => 'Bearer garbage', 401, 'Unauthorized'],
      ['a forged pat_ token of the right shape', () => `Bearer ${validPatShape}`, 401, 'Unauthorized'],
      ['a forged bak_ token', () => `Bearer bak_${'B'.repeat(43)}`, 401, 'Unauthorized'],
      ['a 600-char token', () => `Bearer pat_${'x'.repeat(596)}`, 401, 'Unauthorized'],
      ['the valid token under another scheme (Basic)', () => `Basic ${ownerToken}`, 401, 'Unauthorized'],
      ['the valid token without a scheme', () => ownerToken, 401, 'Unauthorized'],
      ['the valid token followed by junk', () => `Bearer ${ownerToken} junk`, 401, 'Unauthorized'],
      ['the valid token with one character changed', () => `Bearer ${ownerToken.slice(0, -1)}${ownerToken.endsWith('A') ? 'B' : 'A'}`, 401, 'Unauthorized'],
      ['a revoked personal access token', () => `Bearer ${revokedToken}`, 401, 'Unauthorized'],
      ['a valid bot API key (bak_)', () => `Bearer ${botKey}`, 403, 'Forbidden'],
    ]

    const cases = OPS.flatMap((op) => badCredentials.map(([label, auth, status, type]) => ({ op, label, auth, status, type })))
    it.each(cases.map((c) => [c.op.name, c.label, c.status, c] as const))('%s with %s → %i', async (_name, _label, _status, c) => {
      const ws = h.credentials.workspaceId
      const req = await c.op.prepare({ ws, selfToken: ownerToken })
      const res = await send(req, { authorization: c.auth(), workspaceId: ws })
      expectError(res, c.status, c.type)
    })

    it('a bot API key is refused even with an unknown or missing workspace (403: the credential is valid but not for this API)', async () => {
      expectError(await send({ method: 'GET', path: '/bots' }, { authorization: `Bearer ${botKey}` }), 403, 'Forbidden')
      expectError(await send({ method: 'GET', path: '/bots' }, { authorization: `Bearer ${botKey}`, workspaceId: 'nope' }), 403, 'Forbidden')
    })

    it('a bot API key reads its own bot with getBot, as a viewer (no secrets); "undefined" with x-bot-id is that bot; any other bot is refused', async () => {
      const own = h.credentials.botId
      for (const path of [`/bots/${own}`, '/bots/undefined']) {
        const res = await h.app.inject({ method: 'GET', url: `/v1/admin${path}`, headers: { authorization: `Bearer ${botKey}`, 'x-bot-id': own } })
        expect(res.statusCode, path).toBe(200)
        const { bot } = res.json() as { bot: { id: string; signingSecret: string; integrations: { chat: { configuration: Record<string, unknown> } } } }
        expect(bot.id).toBe(own)
        expect(bot.signingSecret).toBe('')
        expect(bot.integrations.chat.configuration.encryptionKey).toBeUndefined()
      }
      const other = await newBot(h.credentials.workspaceId)
      expectError(await send({ method: 'GET', path: `/bots/${other}` }, { authorization: `Bearer ${botKey}` }), 403, 'Forbidden')
      const undefinedOther = await h.app.inject({ method: 'GET', url: '/v1/admin/bots/undefined', headers: { authorization: `Bearer ${botKey}`, 'x-bot-id': other } })
      expectError({ status: undefinedOther.statusCode, body: undefinedOther.json(), text: undefinedOther.body }, 403, 'Forbidden')
      // nothing else: the same key cannot list the workspace's bots nor change its own bot
      expectError(await send({ method: 'GET', path: '/bots' }, { authorization: `Bearer ${botKey}`, workspaceId: h.credentials.workspaceId }), 403, 'Forbidden')
      expectError(await send({ method: 'PUT', path: `/bots/${own}`, body: { name: 'renamed' } }, { authorization: `Bearer ${botKey}`, workspaceId: h.credentials.workspaceId }), 403, 'Forbidden')
    })

    it('denied requests have no effect (a bot API key cannot delete its own bot)', async () => {
      expectError(await send({ method: 'DELETE', path: `/bots/${h.credentials.botId}` }, { authorization: `Bearer ${botKey}`, workspaceId: h.credentials.workspaceId }), 403, 'Forbidden')
      expect(await h.store.getBot(h.credentials.botId)).toBeDefined()
    })
  })

  describe('x-workspace-id on workspace-scoped operations', () => {
    const scoped = OPS.filter((op) => op.scope === 'workspace')

    it.each(scoped.map((op) => [op.name, op] as const))('%s without x-workspace-id → 401 Unauthorized', async (_name, op) => {
      const req = await op.prepare({ ws: h.credentials.workspaceId, selfToken: ownerToken })
      expectError(await send(req, { authorization: `Bearer ${ownerToken}` }), 401, 'Unauthorized')
    })

    it.each(scoped.map((op) => [op.name, op] as const))('%s with an unknown or malformed workspace id → 401 Unauthorized', async (_name, op) => {
      const req = await op.prepare({ ws: h.credentials.workspaceId, selfToken: ownerToken })
      for (const workspaceId of ['', 'no-such-workspace', '00000000-0000-7000-8000-000000000000', 'x'.repeat(600), "' OR 1=1 --"]) {
        expectError(await send(req, { authorization: `Bearer ${ownerToken}`, workspaceId }), 401, 'Unauthorized')
      }
    })

    it.each(scoped.map((op) => [op.name, op] as const))('%s with a workspace the caller is not a member of → 403 Forbidden', async (_name, op) => {
      const req = await op.prepare({ ws: h.credentials.workspaceId, selfToken: outsider.token })
      expectError(await send(req, { authorization: `Bearer ${outsider.token}`, workspaceId: h.credentials.workspaceId }), 403, 'Forbidden')
    })

    it.each(scoped.map((op) => [op.name, op] as const))('%s with no credentials at all → 401 (not 403)', async (_name, op) => {
      const req = await op.prepare({ ws: h.credentials.workspaceId, selfToken: ownerToken })
      expectError(await send(req, {}), 401, 'Unauthorized')
      expectError(await send(req, { workspaceId: 'no-such-workspace' }), 401, 'Unauthorized')
    })

    const pathOps = OPS.filter((op) => op.scope === 'path')
    it.each(pathOps.map((op) => [op.name, op] as const))('%s on a workspace the caller is not a member of → 404 (its existence is not revealed)', async (_name, op) => {
      const ws = (await asOwner('POST', '/workspaces', { name: 'private' })).id as string
      const req = await op.prepare({ ws, selfToken: outsider.token })
      expectError(await send(req, { authorization: `Bearer ${outsider.token}`, workspaceId: outsider.ws }), 404, 'ResourceNotFound')
      expectError(await send(req, { authorization: `Bearer ${outsider.token}` }), 404, 'ResourceNotFound')
      // The workspace is untouched.
      expect((await asOwner('GET', `/workspaces/${ws}`)).name).toBe('private')
    })

    const accountOps = OPS.filter((op) => op.scope === 'account')
    it.each(accountOps.map((op) => [op.name, op] as const))('%s needs no x-workspace-id and ignores an unknown one', async (_name, op) => {
      const req1 = await op.prepare({ ws: h.credentials.workspaceId, selfToken: ownerToken })
      expect((await send(req1, { authorization: `Bearer ${ownerToken}` })).status).toBe(op.ok)
      const req2 = await op.prepare({ ws: h.credentials.workspaceId, selfToken: ownerToken })
      expect((await send(req2, { authorization: `Bearer ${ownerToken}`, workspaceId: 'no-such-workspace' })).status).toBe(op.ok)
    })
  })

  describe('role matrix (fresh workspace per case, member added by email)', () => {
    const cases = OPS.flatMap((op) => ROLES.map((role) => ({ op, role, allowed: rank(role) >= rank(op.minRole) })))
    it.each(cases.map((c) => [c.op.name, c.role, c.allowed ? 'allowed' : '403 Forbidden', c] as const))(
      '%s as %s → %s',
      async (_name, _role, _expected, { op, role, allowed }) => {
        const account = roleAccounts[role]
        const ws = (await asOwner('POST', '/workspaces', { name: `matrix ${op.name} ${role}` })).id as string
        const added = await asOwner('POST', '/workspace-members', { email: account.email, role }, ws)
        expect(added.role).toBe(role)
        const req = await op.prepare({ ws, selfToken: account.token })
        const res = await send(req, { authorization: `Bearer ${account.token}`, workspaceId: ws })
        if (allowed) expect(res.status, res.text).toBe(op.ok)
        else expectError(res, 403, 'Forbidden')
      },
    )

    it('denied writes change nothing (viewer/developer deleteBot, manager deleteWorkspace, developer updateWorkspace)', async () => {
      const ws = (await asOwner('POST', '/workspaces', { name: 'unchanged' })).id as string
      for (const role of ['viewer', 'developer', 'manager'] as const) {
        await asOwner('POST', '/workspace-members', { email: roleAccounts[role].email, role }, ws)
      }
      const bot = await newBot(ws)
      for (const role of ['viewer', 'developer'] as const) {
        expectError(await send({ method: 'DELETE', path: `/bots/${bot}` }, { authorization: `Bearer ${roleAccounts[role].token}`, workspaceId: ws }), 403, 'Forbidden')
      }
      expectError(await send({ method: 'PUT', path: `/bots/${bot}`, body: { name: 'hacked' } }, { authorization: `Bearer ${roleAccounts.viewer.token}`, workspaceId: ws }), 403, 'Forbidden')
      expectError(await send({ method: 'DELETE', path: `/workspaces/${ws}` }, { authorization: `Bearer ${roleAccounts.manager.token}` }), 403, 'Forbidden')
      expectError(await send({ method: 'PUT', path: `/workspaces/${ws}`, body: { name: 'hacked' } }, { authorization: `Bearer ${roleAccounts.developer.token}` }), 403, 'Forbidden')
      expect((await asOwner('GET', `/bots/${bot}`, undefined, ws)).bot.name).toBe('fixture')
      expect((await asOwner('GET', `/workspaces/${ws}`)).name).toBe('unchanged')
    })

    it('an administrator can add members but cannot grant owner; only an owner can', async () => {
      const ws = (await asOwner('POST', '/workspaces', { name: 'grants' })).id as string
      await asOwner('POST', '/workspace-members', { email: roleAccounts.administrator.email, role: 'administrator' }, ws)
      const asAdmin = { authorization: `Bearer ${roleAccounts.administrator.token}`, workspaceId: ws }
      expect((await send({ method: 'POST', path: '/workspace-members', body: { email: freshEmail('ok'), role: 'administrator' } }, asAdmin)).status).toBe(201)
      expectError(await send({ method: 'POST', path: '/workspace-members', body: { email: freshEmail('no'), role: 'owner' } }, asAdmin), 403, 'Forbidden')
      expectError(await send({ method: 'PUT', path: `/workspace-members/${roleAccounts.administrator.id}`, body: { role: 'owner' } }, asAdmin), 403, 'Forbidden')
      expectError(await send({ method: 'PUT', path: `/workspace-members/${ownerId}`, body: { role: 'viewer' } }, asAdmin), 403, 'Forbidden')
      expectError(await send({ method: 'DELETE', path: `/workspace-members/${ownerId}` }, asAdmin), 403, 'Forbidden')
      const asOwnerHeaders = { authorization: `Bearer ${ownerToken}`, workspaceId: ws }
      expect((await send({ method: 'POST', path: '/workspace-members', body: { email: freshEmail('co-owner'), role: 'owner' } }, asOwnerHeaders)).status).toBe(201)
    })

    it('a member whose role is lowered loses the permission at once; a removed member loses the workspace', async () => {
      const ws = (await asOwner('POST', '/workspaces', { name: 'downgrade' })).id as string
      const m = await asOwner('POST', '/workspace-members', { email: freshEmail('downgrade'), role: 'manager' }, ws)
      const creds = { authorization: `Bearer ${m.pat.value}`, workspaceId: ws }
      expect((await send({ method: 'POST', path: '/bots', body: {} }, creds)).status).toBe(201)
      await asOwner('PUT', `/workspace-members/${m.id}`, { role: 'viewer' }, ws)
      expectError(await send({ method: 'POST', path: '/bots', body: {} }, creds), 403, 'Forbidden')
      expect((await send({ method: 'GET', path: '/bots' }, creds)).status).toBe(200)
      await asOwner('DELETE', `/workspace-members/${m.id}`, undefined, ws)
      expectError(await send({ method: 'GET', path: '/bots' }, creds), 403, 'Forbidden')
    })
  })

  describe('secrets and isolation', () => {
    it('a viewer\'s getBot reveals neither integrations.chat.configuration.encryptionKey nor signingSecret; a developer\'s does', async () => {
      const ws = (await asOwner('POST', '/workspaces', { name: 'secrets' })).id as string
      for (const role of ['viewer', 'developer'] as const) {
        await asOwner('POST', '/workspace-members', { email: roleAccounts[role].email, role }, ws)
      }
      const full = (await asOwner('POST', '/bots', { name: 'secretive' }, ws)).bot
      const key = full.integrations.chat.configuration.encryptionKey as string
      const signingSecret = full.signingSecret as string
      expect(key.length).toBeGreaterThanOrEqual(16)
      expect(signingSecret.length).toBeGreaterThan(0)

      const asViewer = await send({ method: 'GET', path: `/bots/${full.id}` }, { authorization: `Bearer ${roleAccounts.viewer.token}`, workspaceId: ws })
      expect(asViewer.status).toBe(200)
      const seen = asViewer.body.bot
      expect(seen.integrations.chat.configuration.encryptionKey).toBeUndefined()
      expect(seen.signingSecret ?? '').toBe('')
      expect(asViewer.text).not.toContain(key)
      expect(asViewer.text).not.toContain(signingSecret)
      expect(asViewer.text).not.toContain('encryptionKey')
      // The viewer still gets what it needs to reach the bot.
      expect(seen.integrations.chat).toMatchObject({ webhookId: full.integrations.chat.webhookId, webhookUrl: full.integrations.chat.webhookUrl, enabled: true })
      // Listing never carries secrets either.
      const listed = await send({ method: 'GET', path: '/bots' }, { authorization: `Bearer ${roleAccounts.viewer.token}`, workspaceId: ws })
      expect(listed.text).not.toContain(key)
      expect(listed.text).not.toContain(signingSecret)

      const asDeveloper = await send({ method: 'GET', path: `/bots/${full.id}` }, { authorization: `Bearer ${roleAccounts.developer.token}`, workspaceId: ws })
      expect(asDeveloper.body.bot.integrations.chat.configuration.encryptionKey).toBe(key)
      expect(asDeveloper.body.bot.signingSecret).toBe(signingSecret)
    })

    it('another workspace\'s bot id → 404 on every bot operation (never its data), and nothing changes', async () => {
      const other = (await asOwner('POST', '/workspaces', { name: 'other' })).id as string
      const foreign = (await asOwner('POST', '/bots', { name: 'foreign', tags: { secret: 'yes' } }, other)).bot
      const foreignKey = await asOwner('POST', '/bots/baks', { botId: foreign.id }, other)
      // The caller (the bootstrap owner) is even a member of both: the header's workspace decides.
      const here = { authorization: `Bearer ${ownerToken}`, workspaceId: h.credentials.workspaceId }
      const attempts: Req[] = [
        { method: 'GET', path: `/bots/${foreign.id}` },
        { method: 'PUT', path: `/bots/${foreign.id}`, body: { name: 'stolen', integrations: { chat: null } } },
        { method: 'GET', path: `/bots/${foreign.id}/logs` },
        { method: 'DELETE', path: `/bots/${foreign.id}` },
        { method: 'POST', path: '/bots/baks', body: { botId: foreign.id } },
        { method: 'GET', path: `/bots/baks?botId=${foreign.id}` },
        { method: 'DELETE', path: `/bots/baks/${foreignKey.id}` },
      ]
      for (const req of attempts) {
        const res = await send(req, here)
        expectError(res, 404, 'ResourceNotFound')
        expect(res.text).not.toContain('foreign')
        expect(res.text).not.toContain(foreign.integrations.chat.webhookId)
      }
      // Same for an account that only belongs to the demo workspace.
      for (const req of attempts) {
        expectError(await send(req, { authorization: `Bearer ${roleAccounts.owner.token}`, workspaceId: h.credentials.workspaceId }), 404, 'ResourceNotFound')
      }
      const after = (await asOwner('GET', `/bots/${foreign.id}`, undefined, other)).bot
      expect(after).toEqual(foreign)
      expect((await asOwner('GET', `/bots/baks?botId=${foreign.id}`, undefined, other)).baks.map((k: { id: string }) => k.id)).toEqual([foreignKey.id])
    })

    it('listings never contain another workspace\'s bots or members', async () => {
      const a = (await asOwner('POST', '/workspaces', { name: 'A' })).id as string
      const b = (await asOwner('POST', '/workspaces', { name: 'B' })).id as string
      const botA = (await asOwner('POST', '/bots', { tags: { shared: 'tag' } }, a)).bot.id as string
      const botB = (await asOwner('POST', '/bots', { tags: { shared: 'tag' } }, b)).bot.id as string
      const onlyA = await asOwner('POST', '/workspace-members', { email: freshEmail('only-a'), role: 'administrator' }, a)
      const onlyB = await asOwner('POST', '/workspace-members', { email: freshEmail('only-b'), role: 'administrator' }, b)

      const botsA = (await asOwner('GET', '/bots?pageSize=100', undefined, a)).bots.map((x: { id: string }) => x.id)
      const botsB = (await asOwner('GET', '/bots?pageSize=100&tags.shared=tag', undefined, b)).bots.map((x: { id: string }) => x.id)
      expect(botsA).toEqual([botA])
      expect(botsB).toEqual([botB])
      const membersA = (await asOwner('GET', '/workspace-members?pageSize=100', undefined, a)).members.map((x: { id: string }) => x.id)
      expect(membersA.sort()).toEqual([ownerId, onlyA.id].sort())
      const membersB = (await send({ method: 'GET', path: '/workspace-members?pageSize=100' }, { authorization: `Bearer ${onlyB.pat.value}`, workspaceId: b })).body.members.map((x: { id: string }) => x.id)
      expect(membersB.sort()).toEqual([ownerId, onlyB.id].sort())
      // Each account lists only its own workspaces.
      const wsOfA = (await send({ method: 'GET', path: '/workspaces' }, { authorization: `Bearer ${onlyA.pat.value}` })).body.workspaces
      expect(wsOfA.map((w: { id: string }) => w.id)).toEqual([a])
      // And cannot reach B through its own token.
      expectError(await send({ method: 'GET', path: '/bots' }, { authorization: `Bearer ${onlyA.pat.value}`, workspaceId: b }), 403, 'Forbidden')
      expectError(await send({ method: 'GET', path: `/bots/${botB}` }, { authorization: `Bearer ${onlyA.pat.value}`, workspaceId: a }), 404, 'ResourceNotFound')
    })

    it('personal access token listings only contain the caller\'s tokens', async () => {
      const mine = (await send({ method: 'GET', path: '/account/pats' }, { authorization: `Bearer ${roleAccounts.viewer.token}` })).body.pats
      const owners = (await send({ method: 'GET', path: '/account/pats' }, { authorization: `Bearer ${ownerToken}` })).body.pats
      const mineIds = new Set(mine.map((p: { id: string }) => p.id))
      for (const p of owners as { id: string }[]) expect(mineIds.has(p.id)).toBe(false)
    })
  })

  describe('error bodies', () => {
    it('every error has exactly { id, code, type, message } with code == HTTP status and an ISO-free opaque id', async () => {
      const samples: [Res, number, string][] = [
        [await send({ method: 'GET', path: '/bots' }, {}), 401, 'Unauthorized'],
        [await send({ method: 'GET', path: '/bots' }, { authorization: `Bearer ${botKey}`, workspaceId: h.credentials.workspaceId }), 403, 'Forbidden'],
        [await send({ method: 'GET', path: '/bots/nope' }, { authorization: `Bearer ${ownerToken}`, workspaceId: h.credentials.workspaceId }), 404, 'ResourceNotFound'],
        [await send({ method: 'GET', path: '/bots?pageSize=0' }, { authorization: `Bearer ${ownerToken}`, workspaceId: h.credentials.workspaceId }), 400, 'InvalidQuery'],
        [await send({ method: 'POST', path: '/bots', body: { name: 1 } }, { authorization: `Bearer ${ownerToken}`, workspaceId: h.credentials.workspaceId }), 400, 'InvalidPayload'],
        [await send({ method: 'POST', path: '/workspace-members', body: { email: roleAccounts.viewer.email, role: 'viewer' } }, { authorization: `Bearer ${ownerToken}`, workspaceId: h.credentials.workspaceId }), 409, 'AlreadyExists'],
      ]
      const ids = new Set<string>()
      for (const [res, status, type] of samples) {
        expectError(res, status, type)
        expect(res.body.id).not.toMatch(ISO_Z)
        ids.add(res.body.id)
      }
      expect(ids.size).toBe(samples.length)
    })

    it('error messages never echo the presented token', async () => {
      const secret = `pat_${'S'.repeat(43)}`
      const res = await send({ method: 'GET', path: '/account/me' }, { authorization: `Bearer ${secret}` })
      expectError(res, 401, 'Unauthorized')
      expect(res.text).not.toContain(secret)
      const bak = await send({ method: 'GET', path: '/account/me' }, { authorization: `Bearer ${botKey}` })
      expect(bak.text).not.toContain(botKey)
    })
  })

  describe('body size limit (50 MB)', () => {
    it('an unauthenticated oversized body is refused with 401 before anything else', async () => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/admin/bots',
        headers: { 'content-type': 'application/json', 'x-workspace-id': h.credentials.workspaceId },
        payload: `{"code":"${'z'.repeat(50 * 1024 * 1024)}"}`,
      })
      expectError({ status: res.statusCode, body: parse(res.body), text: res.body }, 401, 'Unauthorized')
    }, 60_000)

    it('a viewer\'s oversized body is 403 (permission is checked before the body is read)', async () => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/admin/bots',
        headers: { 'content-type': 'application/json', 'x-workspace-id': h.credentials.workspaceId, authorization: `Bearer ${roleAccounts.viewer.token}` },
        payload: `{"code":"${'z'.repeat(50 * 1024 * 1024)}"}`,
      })
      expectError({ status: res.statusCode, body: parse(res.body), text: res.body }, 403, 'Forbidden')
    }, 60_000)
  })
})

describe('Admin API body limit on a real socket', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  /** Sends only the request head (and `bodyPrefix`), then reads whatever the server answers. */
  function rawRequest(head: string, bodyPrefix = ''): Promise<{ status: number; headers: string; body: string }> {
    const { hostname, port } = new URL(h.baseUrl)
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) })
      let data = ''
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new Error(`no complete response within 10 s; got: ${data.slice(0, 200)}`))
      }, 10_000)
      const finish = () => {
        const split = data.indexOf('\r\n\r\n')
        if (split < 0) return false
        const headers = data.slice(0, split)
        const length = /content-length:\s*(\d+)/i.exec(headers)
        const body = data.slice(split + 4)
        if (!length || Buffer.byteLength(body) < Number(length[1])) return false
        clearTimeout(timer)
        socket.destroy()
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body })
        return true
      }
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => {
        data += chunk
        finish()
      })
      socket.on('end', () => {
        if (!finish()) {
          clearTimeout(timer)
          reject(new Error(`connection closed early; got: ${data.slice(0, 200)}`))
        }
      })
      socket.on('error', (err) => {
        if (!finish()) {
          clearTimeout(timer)
          reject(err)
        }
      })
      socket.write(head + bodyPrefix)
    })
  }

  const head = (length: number, token: string | undefined) =>
    [
      `PUT /v1/admin/bots/${h.credentials.botId} HTTP/1.1`,
      `Host: 127.0.0.1`,
      'Content-Type: application/json',
      `Content-Length: ${length}`,
      ...(token ? [`Authorization: Bearer ${token}`] : []),
      `x-workspace-id: ${h.credentials.workspaceId}`,
      '',
      '',
    ].join('\r\n')

  it('Content-Length of 50 MiB + 1 is answered 413 PayloadTooLarge without the body being sent', async () => {
    const res = await rawRequest(head(50 * 1024 * 1024 + 1, h.credentials.token), '{"code":"')
    expect(res.status).toBe(413)
    const body = JSON.parse(res.body)
    expect(body).toMatchObject({ code: 413, type: 'PayloadTooLarge' })
    expect(Object.keys(body).sort()).toEqual(['code', 'id', 'message', 'type'])
    expect((await h.store.getBot(h.credentials.botId))!.code).toBeNull()
  })

  it('Content-Length of 50 MiB + 1 without a token is answered 401 without the body being sent', async () => {
    const res = await rawRequest(head(50 * 1024 * 1024 + 1, undefined))
    expect(res.status).toBe(401)
    expect(JSON.parse(res.body)).toMatchObject({ code: 401, type: 'Unauthorized' })
  })

  it('a 2 MB body over a real socket is accepted (the Chat API 1 MB limit does not apply)', async () => {
    const payload = JSON.stringify({ name: 'two-megabytes', configuration: { data: { blob: 'y'.repeat(2 * 1024 * 1024) } } })
    const res = await fetch(`${h.baseUrl}/v1/admin/bots/${h.credentials.botId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
      body: payload,
    })
    expect(res.status).toBe(200)
    expect((await h.store.getBot(h.credentials.botId))!.name).toBe('two-megabytes')
  })
})
