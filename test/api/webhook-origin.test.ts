/**
 * PARLEY_WEBHOOK_PUBLIC_URL (config.webhookPublicUrl): integration webhooks on an origin of their own (issue #24
 * item 1). The webhookUrl handed to integrations (register) and shown by getBot uses it; that host serves the
 * webhooks only (the console and the APIs answer 403 there), and the main host refuses webhooks (403), both with
 * the error body. The integration is an in-process loopback server standing in for a developer's own server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { handoffFixture } from '../helpers/handoffs.js'
import { installOutsideIntegration, startOutsideIntegration, type OutsideIntegration } from '../helpers/outside-integration.js'
import { expectError, pathOf } from './files-helpers.js'

const HOOKS = 'http://hooks.parley.test:8080'
const MAIN_HOST = 'parley.test'

describe('integration webhooks on their own origin', () => {
  let h: Harness
  let outside: OutsideIntegration
  let webhookUrl: string

  beforeAll(async () => {
    h = await startParley({ config: { webhookPublicUrl: HOOKS } })
    outside = await startOutsideIntegration({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'challenge-ok' })
    const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId, { open: false })
    ;({ webhookUrl } = await installOutsideIntegration(h, f.botId, outside.url))
  })
  afterAll(async () => {
    await outside?.close()
    await h?.close()
  })

  const res = (host: string, method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}) =>
    h.app.inject({ method, url, headers: { host, ...headers }, ...(method === 'POST' && { payload: {} }) })

  it('hands the integration a webhookUrl on that origin', async () => {
    expect(webhookUrl.startsWith(`${HOOKS}/integration-webhooks/`)).toBe(true)
    await expect.poll(() => outside.registered).toContain(webhookUrl)
  })

  it('relays on the webhook host (in any letter case)', async () => {
    for (const host of ['hooks.parley.test:8080', 'HOOKS.Parley.test:8080']) {
      const ok = await res(host, 'GET', `${pathOf(webhookUrl)}/status`)
      expect(ok.statusCode, ok.body).toBe(200)
      expect(ok.body).toBe('challenge-ok')
      expect(String(ok.headers['content-security-policy'])).toMatch(/^sandbox\b/)
    }
  })

  it('refuses webhooks on any other host, without calling the integration', async () => {
    const before = outside.webhooks.length
    for (const host of [MAIN_HOST, 'hooks.parley.test', 'hooks.parley.test:8081', 'localhost']) {
      const refused = await res(host, 'GET', `${pathOf(webhookUrl)}/status`)
      expectError(refused, 403, 'Forbidden')
      expect(refused.json().message).toContain(HOOKS)
    }
    expectError(await res(MAIN_HOST, 'POST', '/integration-webhooks'), 403, 'Forbidden')
    expect(outside.webhooks.length).toBe(before)
  })

  it('the webhook host serves nothing else: the console and the APIs answer 403 there; health probes answer', async () => {
    const owner = { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId }
    const host = 'hooks.parley.test:8080'
    expectError(await res(host, 'GET', '/console/'), 403, 'Forbidden')
    expectError(await res(host, 'POST', '/console/session', { 'x-parley-console': '1' }), 403, 'Forbidden')
    const pat = await h.app.inject({ method: 'POST', url: '/v1/admin/account/pats', headers: { host, ...owner }, payload: { note: 'from the webhook origin' } })
    expectError(pat, 403, 'Forbidden')
    expect(pat.json().message).toContain('serves integration webhooks only')
    expectError(await res(host, 'GET', '/v1/admin/workspaces', owner), 403, 'Forbidden')
    expectError(await res(host, 'GET', '/v1/files/content/x/y'), 403, 'Forbidden')
    expect((await res(host, 'GET', '/healthz')).statusCode).toBe(200)
    // The main host still serves them.
    expect((await res(MAIN_HOST, 'GET', '/console/')).statusCode).toBe(200)
    expect((await res(MAIN_HOST, 'GET', '/v1/admin/account/pats', owner)).statusCode).toBe(200)
  })
})
