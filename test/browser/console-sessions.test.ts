/**
 * The console's Sessions page in Chromium (issue #24): the account's sessions listed with this browser's marked,
 * Revoke ends another session (it answers 401 at once), "Sign out everywhere" ends them all and shows the sign-in
 * page; axe-core finds no serious violation on the page.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { consoleClient, consoleSignIn } from '../helpers/console.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, watchErrors } from './browser.js'

describeBrowser('the console\'s Sessions page in Chromium', () => {
  let h: Harness
  let browser: Browser
  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true }), launchBrowser()])
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  it('lists the sessions, revokes another one, and signs out everywhere', async () => {
    const elsewhere = await consoleSignIn(h, { token: h.credentials.token })
    const other = consoleClient(h, elsewhere.cookie)
    expect((await other('GET', '/v1/admin/account/me')).status).toBe(200)
    const page = await browser.newPage()
    const errors = watchErrors(page)
    await page.goto(`${h.baseUrl}/console/`)
    await page.getByLabel('Personal access token').fill(h.credentials.token)
    await page.keyboard.press('Enter')
    await page.getByText('Signed in as owner@localhost').waitFor()
    await page.getByRole('link', { name: 'Sessions' }).click()
    const rows = page.locator('#sessions tr')
    await page.getByText('2 session(s)').waitFor()
    expect(await rows.count()).toBe(2)
    await expect.poll(() => page.locator('#sessions tr', { hasText: 'this browser' }).count()).toBe(1)
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: artifactPath('console-sessions.png'), fullPage: true })

    // Revoke the other one: it ends at once, this browser's stays.
    await page.locator('#sessions tr', { hasNotText: 'this browser' }).getByRole('button', { name: /^Revoke/ }).click()
    await page.getByText('Session revoked. 1 session(s) left.').waitFor()
    expect(await rows.count()).toBe(1)
    expect((await other('GET', '/v1/admin/account/me')).status).toBe(401)

    // Sign out everywhere: this browser too.
    await page.getByRole('button', { name: 'Sign out everywhere' }).click()
    await page.getByText('Signed out everywhere (1 session(s) ended).').waitFor()
    await page.getByLabel('Personal access token').waitFor()
    const listed = await h.app.inject({ method: 'GET', url: '/v1/admin/account/console-sessions', headers: { authorization: `Bearer ${h.credentials.token}` } })
    expect(listed.json().sessions).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)
})
