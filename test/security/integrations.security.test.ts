/**
 * Integrations served elsewhere (issue #19), their security and validation:
 * - definitions are private to their workspace: another workspace's answer 404 on every operation,
 *   are never listed, and cannot be installed on a bot;
 * - an integration API key acts only for its own integration, on bots that have it installed and
 *   enabled, on the Runtime API only, and sees only its installation's users and conversations;
 * - secret values never appear in any response; bad definitions and installations are clear 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uuidv7 } from '../../src/lib/ids.js'
import { startParley, type Harness } from '../helpers/harness.js'

const CONFIG_SCHEMA = { type: 'object', properties: { token: { type: 'string', minLength: 4 } }, required: ['token'], additionalProperties: false }

describe('integrations: tenancy, keys, secrets, validation', () => {
  let h: Harness
  let otherWs: string
  let otherOwner: string

  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await h.app.inject({ method: method as 'GET', url, headers, ...(body !== undefined && { payload: body as object }) })
    return { status: res.statusCode, text: res.body, json: () => JSON.parse(res.body) }
  }
  const admin = (method: string, path: string, body?: unknown, ws = h.credentials.workspaceId, token = h.credentials.token) =>
    call(method, `/v1/admin${path}`, body, { authorization: `Bearer ${token}`, 'x-workspace-id': ws })
  const ok = async (p: Promise<{ status: number; text: string; json: () => any }>) => {
    const res = await p
    expect(res.status, res.text).toBeLessThan(300)
    return res.json()
  }
  let n = 0
  const define = async (ws = h.credentials.workspaceId, token = h.credentials.token, extra: object = {}) =>
    (await ok(admin('POST', '/integrations', { name: `sec-${++n}`, version: '1.0.0', url: 'http://127.0.0.1:9/', configuration: { schema: CONFIG_SCHEMA }, ...extra }, ws, token))).integration.id as string
  const newBot = async () => (await ok(admin('POST', '/bots', { name: 'sec' }))).bot.id as string
  const install = (botId: string, alias: string, integrationId: string, configuration: object = { token: 'abcd' }) =>
    admin('PUT', `/bots/${botId}`, { integrations: { [alias]: { integrationId, enabled: true, configuration } } })
  const key = async (integrationId: string) => (await ok(admin('POST', '/integrations/iaks', { integrationId }))).value as string
  const runtime = (token: string, botId: string, path: string, extra: Record<string, string> = {}) =>
    call('GET', `/v1/chat${path}`, undefined, { authorization: `Bearer ${token}`, 'x-bot-id': botId, ...extra })

  beforeAll(async () => {
    h = await startParley()
    const ws = await ok(admin('POST', '/workspaces', { name: 'elsewhere' }))
    otherWs = ws.id
    const member = await ok(admin('POST', '/workspace-members', { email: `o-${uuidv7()}@example.com`, role: 'owner' }, otherWs))
    otherOwner = member.pat.value
  })
  afterAll(async () => h?.close())

  it('another workspace\'s integration: 404 on every operation, never listed, not installable', async () => {
    const theirs = await define(otherWs, otherOwner)
    for (const [method, path, body] of [
      ['GET', `/integrations/${theirs}`], ['PUT', `/integrations/${theirs}`, { title: 'x' }], ['DELETE', `/integrations/${theirs}`],
      ['GET', `/integrations/${theirs}/logs`], ['GET', `/integrations/iaks?integrationId=${theirs}`], ['POST', '/integrations/iaks', { integrationId: theirs }],
    ] as [string, string, unknown?][]) {
      const res = await admin(method, path, body)
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404)
      expect(res.json()).toMatchObject({ code: 404, type: 'ResourceNotFound' })
    }
    const { integration } = await ok(admin('GET', `/integrations/${theirs}`, undefined, otherWs, otherOwner))
    expect((await admin('GET', `/integrations/${integration.name}/1.0.0`)).status).toBe(404)
    expect((await ok(admin('GET', '/integrations'))).integrations.map((i: { id: string }) => i.id)).not.toContain(theirs)
    const res = await install(await newBot(), 'stolen', theirs)
    expect(res.status).toBe(404)
    // Their key cannot be deleted from here either.
    const theirKey = await ok(admin('POST', '/integrations/iaks', { integrationId: theirs }, otherWs, otherOwner))
    expect((await admin('DELETE', `/integrations/iaks/${theirKey.id}`)).status).toBe(404)
  })

  it('an integration key acts for its own integration only, where it is installed and enabled, on the Runtime API only', async () => {
    const a = await define()
    const b = await define()
    const botA = await newBot()
    const botB = await newBot()
    expect((await install(botA, 'first', a)).status).toBe(200)
    expect((await install(botB, 'second', b)).status).toBe(200)
    const keyA = await key(a)

    expect((await runtime(keyA, botA, '/users')).status).toBe(200)
    expect((await runtime(keyA, botA, '/users', { 'x-integration-id': a, 'x-integration-alias': 'first' })).status).toBe(200)
    // A's key presented as B, or on a bot that only has B: refused.
    const asB = await runtime(keyA, botA, '/users', { 'x-integration-id': b })
    expect(asB.status).toBe(403)
    expect(asB.json()).toMatchObject({ code: 403, type: 'Forbidden' })
    expect((await runtime(keyA, botB, '/users')).status).toBe(403)
    expect((await runtime(keyA, botB, '/users', { 'x-integration-id': b })).status).toBe(403)
    // Not the Files, Tables or Admin API.
    expect((await call('GET', '/v1/files', undefined, { authorization: `Bearer ${keyA}`, 'x-bot-id': botA })).status).toBe(403)
    expect((await call('GET', '/v1/tables', undefined, { authorization: `Bearer ${keyA}`, 'x-bot-id': botA })).status).toBe(403)
    expect((await call('GET', '/v1/admin/bots', undefined, { authorization: `Bearer ${keyA}`, 'x-workspace-id': h.credentials.workspaceId })).status).toBe(403)
    // A revoked key, an unknown key: 401.
    const revoked = await ok(admin('POST', '/integrations/iaks', { integrationId: a }))
    await ok(admin('DELETE', `/integrations/iaks/${revoked.id}`))
    expect((await runtime(revoked.value, botA, '/users')).status).toBe(401)
    expect((await runtime('iak_forged', botA, '/users')).status).toBe(401)

    // It sees its installation's users only: the bot's chat users are not its own.
    const botKey = (await ok(admin('POST', '/bots/baks', { botId: botA }))).value
    const chatUser = await ok(call('POST', '/v1/chat/users', { tags: {} }, { authorization: `Bearer ${botKey}`, 'x-bot-id': botA }))
    expect((await runtime(keyA, botA, `/users/${chatUser.user.id}`)).status).toBe(404)
    const own = await ok(call('POST', '/v1/chat/users', { tags: { id: 'x' } }, { authorization: `Bearer ${keyA}`, 'x-bot-id': botA }))
    expect((await ok(runtime(botKey, botA, `/users/${own.user.id}`))).user.tags).toEqual({ id: 'x' })
    expect((await ok(call('POST', '/v1/chat/conversations', { channel: 'channel', tags: {} }, { authorization: `Bearer ${keyA}`, 'x-bot-id': botA }))).conversation.integration).toBe('first')

    // Disabled: its key no longer acts for the bot.
    await ok(admin('PUT', `/bots/${botA}`, { integrations: { first: null } }))
    expect((await runtime(keyA, botA, '/users')).status).toBe(403)
    // Installed somewhere: its definition cannot be deleted.
    expect((await admin('DELETE', `/integrations/${b}`)).status).toBe(400)
  })

  it('secret values never appear in a response; the signing secret only for roles that may change it', async () => {
    const value = `never-shown-${uuidv7()}`
    const created = await admin('POST', '/integrations', { name: `secretive-${++n}`, version: '1.0.0', secrets: { API_KEY: value } })
    expect(created.status).toBe(201)
    const id = created.json().integration.id
    const name = created.json().integration.name
    const botId = await newBot()
    await ok(install(botId, 'sec', id, {}))
    for (const res of [created, await admin('GET', `/integrations/${id}`), await admin('GET', `/integrations/${name}/latest`), await admin('GET', '/integrations'),
      await admin('GET', `/bots/${botId}`), await admin('PUT', `/integrations/${id}`, { secrets: { API_KEY: value } }),
      await admin('GET', `/integrations/${id}/logs`), await admin('GET', `/integrations/iaks?integrationId=${id}`), await admin('GET', '/bots'),
      await admin('POST', `/bots/${botId}/integrations/sec/ping`, {}), await admin('PUT', `/bots/${botId}`, { integrations: { sec: { enabled: true } } })]) {
      expect(res.text).not.toContain(value)
    }
    expect((await ok(admin('GET', `/integrations/${id}`))).integration.secrets).toEqual(['API_KEY'])
    // The one answer that carries them: getIntegrationSecrets, to the integration's own key (its process, at start).
    const ownKey = await key(id)
    const secrets = (token?: string) => call('GET', '/v1/integration/secrets', undefined, token === undefined ? {} : { authorization: `Bearer ${token}` })
    expect((await ok(secrets(ownKey))).secrets).toEqual({ API_KEY: value })
    const otherKey = await key(await define())
    expect((await ok(secrets(otherKey))).secrets).toEqual({})
    const botKey = (await ok(admin('POST', '/bots/baks', { botId }))).value
    for (const [token, status] of [[botKey, 403], [h.credentials.token, 403], ['iak_forged', 401], [undefined, 401]] as const) {
      const res = await secrets(token)
      expect(res.status, res.text).toBe(status)
      expect(res.text).not.toContain(value)
    }
    // Nor through the Runtime API, whoever calls it.
    for (const token of [ownKey, botKey]) for (const path of ['/users', '/conversations', '/events']) expect((await runtime(token, botId, path)).text).not.toContain(value)
    const viewer = await ok(admin('POST', '/workspace-members', { email: `v-${uuidv7()}@example.com`, role: 'viewer' }))
    const seen = await ok(admin('GET', `/integrations/${id}`, undefined, h.credentials.workspaceId, viewer.pat.value))
    expect(seen.integration.signingSecret).toBe('')
  })

  it('bad definitions and installations are 400s that say what is wrong', async () => {
    const cases: [object, RegExp][] = [
      [{ name: 'Bad Name', version: '1.0.0' }, /name must be/],
      [{ name: 'ok', version: 'one' }, /version must be a semantic version/],
      [{ name: 'ok', version: '1.0.0', url: 'ftp://x' }, /url must use http/],
      [{ name: 'ok', version: '1.0.0', configuration: { schema: { type: 'nonsense' } } }, /configuration.schema is not a valid JSON schema/],
      [{ name: 'ok', version: '1.0.0', channels: { c: {} } }, /channels.c.messages must be an object/],
      [{ name: 'ok', version: '1.0.0', actions: { a: { input: {} } } }, /actions.a must have input.schema and output.schema/],
      [{ name: 'ok', version: '1.0.0', secrets: { 'bad name': 'x' } }, /not a secret name/],
    ]
    for (const [body, message] of cases) {
      const res = await admin('POST', '/integrations', body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.json().message).toMatch(message)
    }
    const id = await define()
    const { name } = (await ok(admin('GET', `/integrations/${id}`))).integration
    expect((await admin('POST', '/integrations', { name, version: '1.0.0' })).status).toBe(409)
    const botId = await newBot()
    const bad: [object, RegExp][] = [
      [{ 'has:colon': { integrationId: id, configuration: { token: 'abcd' } } }, /is not an integration alias/],
      [{ fresh: { enabled: true } }, /integrationId is required/],
      [{ fresh: { integrationId: id, configuration: { token: 'ab' } } }, /integrations.fresh.configuration.token must NOT have fewer than 4 characters/],
      [{ fresh: { integrationId: id, configuration: {} } }, /integrations.fresh.configuration must have required property 'token'/],
      [{ fresh: { integrationId: id, configurationType: 'nope', configuration: { token: 'abcd' } } }, /has no configuration "nope"/],
      [{ fresh: { integrationId: 'no-such-integration' } }, /Integration "no-such-integration" not found/],
    ]
    for (const [integrations, message] of bad) {
      const res = await admin('PUT', `/bots/${botId}`, { integrations })
      expect(res.status, JSON.stringify(integrations)).toBeGreaterThanOrEqual(400)
      expect(res.json().message).toMatch(message)
    }
    // Nothing was installed by the refused calls.
    expect(Object.keys((await ok(admin('GET', `/bots/${botId}`))).bot.integrations)).toEqual(['chat'])
  })
})
