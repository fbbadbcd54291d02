/**
 * The request log (src/http/plugins/request-log.ts, #25 item 7): one pino JSON line per request, read from a started
 * app's own logger. Requests carry every kind of secret — a personal access token, a bot API key, an integration API
 * key, a Chat API user key, a console session cookie — in headers and in query strings; the lines name the route,
 * status, caller kind and ids, and the secrets never appear anywhere in the log. PARLEY_REQUEST_LOG is honoured (off,
 * a level), and health and metrics probes are logged at debug only.
 */
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '../../src/config.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { consoleSignIn } from '../helpers/console.js'
import { createBotKey } from '../helpers/runtime-client.js'
import { installOutsideIntegration, startOutsideIntegration, type OutsideIntegration } from '../helpers/outside-integration.js'

interface Line { level: number; msg: string; reqId?: string; method?: string; route?: string | null; path?: string; status?: number; ms?: number; caller?: string; workspaceId?: string; botId?: string; integrationId?: string; userId?: string; accountId?: string }

/** A Parley whose log lines (pino JSON) are kept in `text`, with LOG_LEVEL `level`. */
async function logged(level: string, config: Partial<Config> = {}, listen = false): Promise<{ h: Harness; text: () => string; lines: () => Line[] }> {
  let text = ''
  const stream = new Writable({ write(chunk, _encoding, callback) { text += String(chunk); callback() } })
  const h = await startParley({ config, listen, logger: { level, stream } })
  return { h, text: () => text, lines: () => text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request') }
}

describe('the request log', () => {
  let h: Harness
  let text: () => string
  let lines: () => Line[]
  let outside: OutsideIntegration

  beforeAll(async () => {
    ;({ h, text, lines } = await logged('info', {}, true))
    outside = await startOutsideIntegration({ status: 200, headers: {}, body: '' })
  })
  afterAll(async () => {
    await outside?.close()
    await h?.close()
  })

  const inject = async (method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await h.app.inject({ method, url, headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { payload: JSON.stringify(body) }) })
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) as Record<string, any> : {}, id: res.headers['x-request-id'] }
  }
  const lineOf = (path: string) => lines().filter((l) => l.path?.startsWith(path)).at(-1)

  it('one line per request with route, status, caller kind and ids; no secret in headers or the query string is ever written', async () => {
    const { token: pat, workspaceId, botId } = h.credentials
    const { webhookId } = h.credentials.chat
    const ws = { 'x-workspace-id': workspaceId }
    const before = lines().length

    // An admin PAT, in the header and (by mistake) in the query string too.
    expect((await inject('GET', `/v1/admin/bots/${botId}?token=${pat}&view=full`, { authorization: `Bearer ${pat}`, ...ws })).status).toBe(200)
    const admin = lineOf(`/v1/admin/bots/${botId}`)!
    expect(admin).toMatchObject({ level: 30, method: 'GET', route: '/v1/admin/bots/:id', status: 200, caller: 'pat', workspaceId, botId, path: `/v1/admin/bots/${botId}?token=[redacted]&view=full` })
    expect(admin.accountId).toEqual(expect.any(String))
    expect(admin.ms).toEqual(expect.any(Number))
    expect(admin.reqId).toEqual(expect.any(String))

    // A bot API key on the Runtime API.
    const botKey = (await createBotKey(h)).value
    expect((await inject('GET', `/v1/chat/conversations?pageSize=5&api_key=${botKey}`, { authorization: `Bearer ${botKey}`, 'x-bot-id': botId })).status).toBe(200)
    expect(lineOf('/v1/chat/conversations')).toMatchObject({ route: '/v1/chat/conversations', status: 200, caller: 'bot-key', botId, workspaceId, path: '/v1/chat/conversations?pageSize=5&api_key=[redacted]' })

    // An integration's own key, through its installation.
    const { integrationId } = await installOutsideIntegration(h, botId, outside.url)
    const iak = (await inject('POST', '/v1/admin/integrations/iaks', { authorization: `Bearer ${pat}`, ...ws }, { integrationId })).body.value as string
    expect(iak).toMatch(/^iak_/)
    const asIntegration = await inject('GET', '/v1/chat/users', { authorization: `Bearer ${iak}`, 'x-bot-id': botId, 'x-integration-alias': 'outside' })
    expect(asIntegration.status).toBe(200)
    expect(lineOf('/v1/chat/users')).toMatchObject({ route: '/v1/chat/users', status: 200, caller: 'integration-key', botId })
    expect(lineOf('/v1/chat/users')!.integrationId).toEqual(expect.any(String))

    // A Chat API user: created anonymously (its key in the answer), then calling with x-user-key (and the key in the query).
    const created = await inject('POST', `/${webhookId}/users`, {}, {})
    expect(created.status).toBe(201)
    const userKey = created.body.key as string
    expect(lineOf('/[redacted]/users')).toMatchObject({ method: 'POST', route: '/:webhookId/users', status: 201, caller: 'anonymous', botId })
    expect((await inject('GET', `/${webhookId}/users/me?x-user-key=${encodeURIComponent(userKey)}`, { 'x-user-key': userKey })).status).toBe(200)
    expect(lineOf('/[redacted]/users/me')).toMatchObject({
      route: '/:webhookId/users/me', status: 200, caller: 'chat-user', botId, userId: created.body.user.id, path: '/[redacted]/users/me?x-user-key=[redacted]',
    })

    // The webhook id percent-encoded in the path (the route decodes it): redacted all the same.
    const encoded = [...webhookId].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')
    expect((await inject('GET', `/${encoded}/users/me`, { 'x-user-key': userKey })).status).toBe(200)
    expect(lines().at(-1)).toMatchObject({ route: '/:webhookId/users/me', status: 200, path: '/[redacted]/users/me' })

    // A console session: its cookie (and the PAT it was made from, sent in the body) never written.
    const { cookie } = await consoleSignIn(h, { token: pat })
    expect(cookie).toBeTruthy()
    expect((await inject('GET', '/v1/admin/bots', { cookie: cookie!, 'x-parley-console': '1', ...ws })).status).toBe(200)
    expect(lineOf('/v1/admin/bots')).toMatchObject({ route: '/v1/admin/bots', status: 200, caller: 'console-session', workspaceId })

    // Anonymous and refused: a wrong key is not written either.
    expect((await inject('GET', '/v1/admin/bots', { authorization: 'Bearer pat_not-a-real-token-4242', ...ws })).status).toBe(401)
    expect(lineOf('/v1/admin/bots')).toMatchObject({ status: 401, caller: 'anonymous' })
    // An unknown path: no route.
    expect((await inject('GET', '/no/such/path?secret=s3cr3t-value')).status).toBe(404)
    expect(lineOf('/no/such/path')).toMatchObject({ route: null, status: 404, path: '/no/such/path?secret=[redacted]' })

    expect(lines().length - before).toBeGreaterThanOrEqual(10)
    const log = text()
    for (const secret of [pat, botKey, iak, userKey, cookie!.split('=')[1]!, 'pat_not-a-real-token-4242', 's3cr3t-value', webhookId]) {
      expect(log.includes(secret), `a secret in the log: ${secret.slice(0, 8)}…`).toBe(false)
    }
  })

  it('probes are not written at info', async () => {
    expect((await inject('GET', '/healthz')).status).toBe(200)
    expect(lineOf('/healthz')).toBeUndefined()
  })
})

describe('the request log settings', () => {
  it('PARLEY_REQUEST_LOG off writes no request line; a level writes them at that level; probes at debug', async () => {
    for (const [setting, logLevel, expected] of [['off', 'debug', []], ['warn', 'warn', [40]], ['debug', 'debug', [20, 20]], ['info', 'warn', []]] as const) {
      const { h, lines } = await logged(logLevel, { requestLog: setting })
      try {
        await h.app.inject({ method: 'GET', url: '/v1/admin/bots', headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId } })
        await h.app.inject({ method: 'GET', url: '/healthz' })
        expect(lines().map((l) => l.level), `PARLEY_REQUEST_LOG=${setting} LOG_LEVEL=${logLevel}`).toEqual(expected)
      } finally {
        await h.close()
      }
    }
  })
})
