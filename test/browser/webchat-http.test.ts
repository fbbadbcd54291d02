import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'

/** The webchat's HTTP surface (no browser needed): page, assets, embed script, headers, URLs in the APIs. */
describe('webchat routes', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => {
    await h?.close()
  })

  const admin = () => ({ authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId })

  it('serves one page per chat integration with a strict Content-Security-Policy', async () => {
    const { webhookId } = h.credentials.chat
    const res = await h.app.inject({ method: 'GET', url: `/webchat/${webhookId}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    const csp = String(res.headers['content-security-policy'])
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "require-trusted-types-for 'script'"]) {
      expect(csp).toContain(directive)
    }
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    expect(res.headers['cache-control']).toBe('no-store')
    const html = res.body
    expect(html).toContain(`data-webhook-id="${webhookId}"`)
    expect(html).toContain(`data-api="../${webhookId}"`)
    expect(html).toMatch(/<script type="module" src="assets\/webchat\.js\?v=[\w-]+"><\/script>/)
    // No inline script or style: the only <script> has a src, and there is no style attribute.
    expect(html.match(/<script\b[^>]*>/g)).toHaveLength(1)
    expect(html).not.toMatch(/\sstyle=/)
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/) // no CDN
    // Accessible shell: a labelled live log, a labelled input, a status region.
    expect(html).toContain('role="log"')
    expect(html).toContain('<label for="pw-input"')
    expect(html).toContain('role="status"')
    expect(html).toContain('name="viewport"')
  })

  it('answers 404 with a page for unknown or disabled webhooks', async () => {
    const unknown = await h.app.inject({ method: 'GET', url: '/webchat/00000000-0000-4000-8000-000000000000' })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(unknown.body).toContain('Chat not found')
    const hostile = await h.app.inject({ method: 'GET', url: `/webchat/${encodeURIComponent('"><script>alert(1)</script>')}` })
    expect(hostile.statusCode).toBe(404)
    expect(hostile.body).not.toContain('<script>alert(1)')

    const other = await h.createChatIntegration()
    expect((await h.app.inject({ method: 'GET', url: `/webchat/${other.webhookId}` })).statusCode).toBe(200)
    const bots = (await h.app.inject({ method: 'GET', url: '/v1/admin/bots', headers: admin() })).json<{ bots: Array<{ id: string; name: string }> }>()
    const otherBot = bots.bots.find((b) => b.name === 'Other bot')!
    const disabled = await h.app.inject({ method: 'PUT', url: `/v1/admin/bots/${otherBot.id}`, headers: admin(), payload: { integrations: { chat: { enabled: false } } } })
    expect(disabled.statusCode).toBe(200)
    expect((await h.app.inject({ method: 'GET', url: `/webchat/${other.webhookId}` })).statusCode).toBe(404)
  })

  it('serves the bundled app and stylesheet with ETags, immutable when versioned', async () => {
    const page = (await h.app.inject({ method: 'GET', url: `/webchat/${h.credentials.chat.webhookId}` })).body
    const version = /webchat\.js\?v=([\w-]+)/.exec(page)![1]!
    const js = await h.app.inject({ method: 'GET', url: `/webchat/assets/webchat.js?v=${version}` })
    expect(js.statusCode).toBe(200)
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(js.body.length).toBeGreaterThan(1000)
    expect(js.body).not.toContain('innerHTML')
    expect(js.body).not.toMatch(/\bimport\s*\(|from\s*["']https?:/) // one self-contained bundle
    const etag = String(js.headers.etag)
    expect((await h.app.inject({ method: 'GET', url: '/webchat/assets/webchat.js', headers: { 'if-none-match': etag } })).statusCode).toBe(304)
    expect((await h.app.inject({ method: 'GET', url: '/webchat/assets/webchat.js?v=old' })).headers['cache-control']).toBe('no-cache')
    const css = await h.app.inject({ method: 'GET', url: `/webchat/assets/webchat.css?v=${version}` })
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
    expect(css.body).toContain('.pw-msg')
    expect((await h.app.inject({ method: 'GET', url: '/webchat/assets/../../v1/admin/bots' })).statusCode).not.toBe(200)
    expect((await h.app.inject({ method: 'GET', url: '/webchat/assets/secret.txt' })).statusCode).toBe(404)
  })

  it('serves embed.js for other sites', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/webchat/embed.js', headers: { origin: 'https://shop.example' } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin')
    expect(res.body).toContain('data-webhook-id')
    expect(res.body).not.toContain('innerHTML')
  })

  it('does not disturb the Chat API of a webhook, nor the other APIs', async () => {
    const { webhookId } = h.credentials.chat
    expect((await h.app.inject({ method: 'GET', url: `/${webhookId}/hello/` })).statusCode).toBe(200)
    expect((await h.app.inject({ method: 'POST', url: `/${webhookId}/users`, payload: {} })).statusCode).toBe(201)
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    // The webchat's page and assets are not part of the API description; Botpress's webchat API (/webchat-api) is.
    const openapi = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>()
    expect(Object.keys(openapi.paths).filter((p) => p.startsWith('/webchat/'))).toEqual([])
    expect(Object.keys(openapi.paths)).toContain('/webchat-api/{clientId}/initialize')
  })

  it('reports the webchat address in credentials.json and in getBot', async () => {
    const { webhookId, webchatUrl } = h.credentials.chat
    expect(webchatUrl).toBe(`${h.baseUrl}/webchat/${webhookId}`)
    const bot = (await h.app.inject({ method: 'GET', url: `/v1/admin/bots/${h.credentials.botId}`, headers: admin() })).json<{ bot: { integrations: { chat: { webchatUrl: string; webhookUrl: string } } } }>().bot
    expect(bot.integrations.chat.webchatUrl).toBe(webchatUrl)
    expect(bot.integrations.chat.webhookUrl).toBe(h.credentials.chat.url)
  })
})
