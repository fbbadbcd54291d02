/**
 * GET /{webhookId}/webchat (operation getWebchatSettings, Parley's addition to the Chat API): the bot's public webchat settings, which
 * embed.js's launcher reads from a page of another origin. It answers any origin without credentials (GET and its
 * preflight only), exposes the appearance settings and nothing else (no upload policy, no key, no secret), answers
 * 404 in the Botpress error body for unknown or disabled chats, and leaves the CORS policy of every other route as
 * it was (the caller's origin echoed, with credentials, for the APIs the official clients call from browsers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminClient, expectError, parseJson } from '../helpers/admin-client.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { WEBCHAT_SETTINGS } from '../helpers/webchat-settings.js'

const SHOP = 'https://shop.example'

const APPEARANCE = WEBCHAT_SETTINGS

describe('GET /{webhookId}/webchat (public, any origin)', () => {
  let h: Harness
  let admin: ReturnType<typeof adminClient>
  const inject = async (method: 'GET' | 'OPTIONS' | 'POST', url: string, headers: Record<string, string> = {}) => {
    const res = await h.app.inject({ method, url, headers })
    return { status: res.statusCode, headers: res.headers, text: res.body, body: parseJson(res.body) as Record<string, unknown> }
  }

  beforeAll(async () => {
    h = await startParley()
    admin = adminClient(h)
    const res = await admin('PUT', `/bots/${h.credentials.botId}`, { body: { webchat: { ...APPEARANCE, uploadTypes: 'image/*', uploadMaxBytes: 1000 } } })
    expect(res.status, res.text).toBe(200)
  })
  afterAll(async () => h?.close())

  it('answers the appearance settings, with CORS for any origin and no credentials', async () => {
    const res = await inject('GET', `/${h.credentials.chat.webhookId}/webchat`, { origin: SHOP })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ webchat: APPEARANCE })
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    expect(String(res.headers.vary ?? '')).not.toMatch(/origin/i)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it('exposes no secret: only the public keys, not the upload policy, keys, tokens or ids', async () => {
    const res = await inject('GET', `/${h.credentials.chat.webhookId}/webchat`)
    expect(Object.keys(res.body)).toEqual(['webchat'])
    const keys = Object.keys(res.body.webchat as object)
    expect(keys.sort()).toEqual(Object.keys(APPEARANCE).sort())
    for (const secret of [h.credentials.chat.encryptionKey, h.credentials.token, h.credentials.workspaceId, h.credentials.botId, 'image/*']) {
      expect(res.text).not.toContain(secret)
    }
    const { bot } = (await admin('GET', `/bots/${h.credentials.botId}`)).body as { bot: { signingSecret: string } }
    expect(res.text).not.toContain(bot.signingSecret)
    // A bot without settings: an empty object.
    const other = await h.createChatIntegration()
    expect((await inject('GET', `/${other.webhookId}/webchat`)).body).toEqual({ webchat: {} })
  })

  it('answers its preflight for GET only, for any origin, without credentials', async () => {
    const res = await inject('OPTIONS', `/${h.credentials.chat.webhookId}/webchat`, {
      origin: SHOP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-user-key',
    })
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-methods']).toBe('GET')
    // No request header is allowed: a cross-origin request with x-user-key or authorization is refused by the browser.
    expect(res.headers['access-control-allow-headers'] ?? '').toBe('')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('unknown, malformed or disabled chats answer 404 in the error body; other methods are not routes', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'x'.repeat(300), '%2e%2e']) {
      const res = await inject('GET', `/${id}/webchat`, { origin: SHOP })
      expectError({ status: res.status, body: res.body, text: res.text }, 404, 'ResourceNotFound')
    }
    const other = await h.createChatIntegration()
    const bots = (await admin('GET', '/bots')).body as { bots: { id: string; name: string }[] }
    const otherBot = bots.bots.find((b) => b.name === 'Other bot' && b.id !== h.credentials.botId)!
    expect((await admin('PUT', `/bots/${otherBot.id}`, { body: { integrations: { chat: { enabled: false } } } })).status).toBe(200)
    const disabled = await inject('GET', `/${other.webhookId}/webchat`)
    expect(disabled.status).toBe(404)
    const post = await inject('POST', `/${h.credentials.chat.webhookId}/webchat`, { origin: SHOP })
    expect(post.status).toBeGreaterThanOrEqual(400)
    expect(post.status).toBeLessThan(500)
    expect(post.body).toMatchObject({ code: post.status })
  })

  it('leaves the CORS policy of the other routes as it was: the origin echoed, with credentials, the API methods', async () => {
    const { webhookId } = h.credentials.chat
    const others = [
      '/v1/admin/bots', `/${webhookId}/users`, `/${webhookId}/conversations`, '/v1/files', '/v1/chat/messages', '/v1/tables',
      `/webchat/${webhookId}`, '/webchat/embed.js', '/', '/healthz',
    ]
    for (const url of others) {
      const preflight = await inject('OPTIONS', url, { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-user-key' })
      expect(preflight.status, url).toBe(204)
      expect(preflight.headers['access-control-allow-origin'], url).toBe(SHOP)
      expect(preflight.headers['access-control-allow-credentials'], url).toBe('true')
      expect(preflight.headers['access-control-allow-methods'], url).toBe('GET, POST, PUT, PATCH, DELETE')
      expect(String(preflight.headers['access-control-allow-headers']), url).toContain('x-user-key')
      const get = await inject('GET', url, { origin: SHOP })
      expect(get.headers['access-control-allow-origin'], url).toBe(SHOP)
      expect(get.headers['access-control-allow-credentials'], url).toBe('true')
    }
  })
})
