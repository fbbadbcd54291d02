/**
 * Issue #24 item 1: no byte that a bot, an integration, a user or an uploader controls is ever active content on
 * Parley's origin. Every route that serves such bytes goes through src/http/untrusted-content.ts; here, one case per
 * route, an HTML page with a script and an SVG with a script come back inert: `Content-Security-Policy: sandbox`
 * (no script, opaque origin), `nosniff`, `Content-Disposition: attachment` (a browser downloads them instead of
 * rendering them), no cookie set. The integration webhook relays only an allowlist of the integration's headers
 * (no Set-Cookie, no CORS, no custom ones) and never forwards the caller's cookies to the integration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { handoffFixture } from '../helpers/handoffs.js'
import { installOutsideIntegration, startOutsideIntegration, type OutsideIntegration } from '../helpers/outside-integration.js'
import { createFile, download, pathOf, upload, uniqueKey } from '../api/files-helpers.js'

const HTML = '<!doctype html><script>fetch("/v1/admin/account/pats",{method:"POST",headers:{"x-parley-console":"1"}})</script>'
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>parent.postMessage(document.cookie,"*")</script></svg>'
const ACTIVE = [{ name: 'page.html', type: 'text/html', body: HTML }, { name: 'picture.svg', type: 'image/svg+xml', body: SVG }]

/** The headers that keep bytes inert wherever a browser meets them. */
function expectInert(res: LightMyRequestResponse, what: string): void {
  expect(res.statusCode, `${what}: ${res.body.slice(0, 200)}`).toBeLessThan(300)
  const csp = String(res.headers['content-security-policy'])
  expect(csp.split(';').map((d) => d.trim()), what).toContain('sandbox')
  expect(csp, what).toContain("default-src 'none'")
  expect(res.headers['x-content-type-options'], what).toBe('nosniff')
  expect(String(res.headers['content-disposition']), what).toMatch(/^attachment\b/)
  expect(res.headers['set-cookie'], what).toBeUndefined()
}

describe('untrusted bytes are served inert, on every route that serves them', () => {
  let h: Harness
  let outside: OutsideIntegration
  const call = () => adminClient(h)

  beforeAll(async () => {
    h = await startParley()
    outside = await startOutsideIntegration({ status: 200, headers: {}, body: '' })
  })
  afterAll(async () => {
    await outside?.close()
    await h?.close()
  })

  it('Files API download URLs (signed and public): uploaded HTML and SVG', async () => {
    for (const a of ACTIVE) {
      for (const accessPolicies of [[], ['public_content']]) {
        const file = await createFile(h, uniqueKey('active').replace('.txt', `-${a.name}`), a.body, { contentType: a.type, accessPolicies })
        const res = await download(h, file.url)
        expectInert(res, `${a.type} ${accessPolicies.join()}`)
        expect(res.headers['content-type']).toBe(a.type) // the file's type stays what the uploader declared
        expect(res.body).toBe(a.body)
      }
    }
    // A passive type stays inline (the webchat shows pictures, plays media, opens PDFs), still sandboxed.
    const png = await createFile(h, uniqueKey('pic').replace('.txt', '.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]), { contentType: 'image/png' })
    const res = await download(h, png.url)
    expect(String(res.headers['content-disposition'])).toMatch(/^inline\b/)
    expect(String(res.headers['content-security-policy'])).toMatch(/^sandbox\b/)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it('webchat uploads: a chat user\'s HTML and SVG', async () => {
    const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId, { open: false })
    const configured = await call()('PUT', `/bots/${f.botId}`, { body: { integrations: { chat: { configuration: { webchat: { uploadTypes: 'text/html,image/svg+xml' } } } } } })
    expect(configured.status, configured.text).toBe(200)
    for (const a of ACTIVE) {
      const created = await h.app.inject({ method: 'POST', url: `/${f.webhookId}/files`, headers: { 'x-user-key': f.userKey }, payload: { name: a.name, contentType: a.type, size: Buffer.byteLength(a.body) } })
      expect(created.statusCode, created.body).toBe(200)
      const { file } = created.json() as { file: { uploadUrl: string; url: string } }
      const put = await upload(h, file.uploadUrl, a.body, a.type)
      expect(put.statusCode, put.body).toBe(200)
      expectInert(await download(h, file.url), `webchat upload ${a.type}`)
    }
  })

  it('handoff uploads: an agent\'s HTML and SVG attachments', async () => {
    const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId)
    for (const a of ACTIVE) {
      const created = await call()('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/files`, { body: { name: a.name, contentType: a.type, size: Buffer.byteLength(a.body) } })
      expect(created.status, created.text).toBe(200)
      const put = await upload(h, created.body.file.uploadUrl, a.body, a.type)
      expect(put.statusCode, put.body).toBe(200)
      expectInert(await download(h, created.body.file.url), `handoff upload ${a.type}`)
    }
  })

  it('the integration webhook: HTML and SVG answers relayed inert, without Set-Cookie, CORS or custom headers; the caller\'s cookie is not forwarded', async () => {
    const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId, { open: false })
    const { webhookUrl } = await installOutsideIntegration(h, f.botId, outside.url)
    for (const a of ACTIVE) {
      outside.answer = {
        status: 200,
        headers: {
          'content-type': a.type,
          'set-cookie': ['parley_console=stolen; Path=/', 'other=1; Path=/'],
          'access-control-allow-origin': '*',
          'access-control-allow-credentials': 'true',
          'content-security-policy': 'script-src *',
          'x-content-type-options': 'sniff',
          'content-disposition': 'inline',
          'x-frame-options': 'ALLOWALL',
          link: '</evil.css>; rel=stylesheet',
          refresh: '0; url=https://example.com/',
          'www-authenticate': 'Basic realm="Parley"',
          'x-custom': 'value',
          'cache-control': 'no-store',
        },
        body: a.body,
      }
      const before = outside.webhooks.length
      const res = await h.app.inject({
        method: 'GET', url: `${pathOf(webhookUrl)}/status`,
        headers: { cookie: 'parley_console=the-owners-session', origin: 'https://elsewhere.example', authorization: 'Bearer caller-token' },
      })
      expectInert(res, `relayed ${a.type}`)
      expect(res.body).toBe(a.body)
      expect(res.headers['content-type']).toBe(a.type)
      expect(res.headers['cache-control']).toBe('no-store') // allowlisted
      for (const name of ['x-custom', 'link', 'refresh', 'www-authenticate', 'x-frame-options']) expect(res.headers[name], name).toBeUndefined()
      expect(Object.keys(res.headers).filter((k) => k.startsWith('access-control-'))).toEqual([])
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin')
      // The integration saw the request, but not the caller's cookies (the console session on this origin).
      expect(outside.webhooks.length).toBe(before + 1)
      const seen = outside.webhooks.at(-1)!
      expect(seen.path).toBe('/status')
      expect(seen.headers.cookie).toBeUndefined()
      expect(seen.headers.authorization).toBe('Bearer caller-token') // the caller's own credential for the integration
    }
    // An answer without a type, or with one that is not a MIME type, is served as bytes to download.
    for (const type of [undefined, 'html', 'text/html garbage']) {
      outside.answer = { status: 201, headers: type === undefined ? {} : { 'content-type': type }, body: HTML }
      const res = await h.app.inject({ method: 'POST', url: pathOf(webhookUrl), payload: '{}', headers: { 'content-type': 'application/json' } })
      expect(res.statusCode).toBe(201)
      expectInert(res, `relayed type ${type}`)
      expect(res.headers['content-type']).toBe('application/octet-stream')
    }
  })

  it('demo assets: the demo SVG', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/demo/assets/parley.svg' })
    expectInert(res, 'demo svg')
    expect(res.headers['content-type']).toBe('image/svg+xml')
    const wav = await h.app.inject({ method: 'GET', url: '/demo/assets/sample.wav' })
    expect(String(wav.headers['content-disposition'])).toMatch(/^inline\b/)
    expect(String(wav.headers['content-security-policy'])).toMatch(/^sandbox\b/)
  })

  it('conversation export: users\' words in a CSV download', async () => {
    const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId, { open: false })
    const sent = await h.app.inject({ method: 'POST', url: `/${f.webhookId}/messages`, headers: { 'x-user-key': f.userKey }, payload: { conversationId: f.conversationId, payload: { type: 'text', text: HTML } } })
    expect(sent.statusCode, sent.body).toBe(201)
    const res = await h.app.inject({ method: 'GET', url: `/v1/admin/bots/${f.botId}/export?format=csv`, headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId } })
    expectInert(res, 'conversation export')
    expect(res.body).toContain('fetch(')
  })
})
