/**
 * The console in Chromium: sign in with a token (and with a one-time link), find a conversation by a word in it,
 * read its transcript (hostile HTML and markdown rendered inert, as text), export it (the downloaded file's
 * content), read the analytics dashboard after scripted traffic (its numbers match getBotAnalytics, which match
 * counts made here), read the logs with a live tail; screenshots as artifacts, axe-core with no serious violation.
 */
import { readFile } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { ChatClient } from '../helpers/chat-client.js'
import { parseDelimited } from '../../src/lib/csv.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, watchErrors } from './browser.js'

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'

describeBrowser('the console in Chromium', () => {
  let h: Harness
  let browser: Browser
  const word = `platypus${randomUUID().slice(0, 6)}`
  let conversationId: string
  const counts = { users: 3, userMessages: 0 }

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true }), launchBrowser()])
    const chat = ChatClient.of(h)
    // A scripted day: three users, each with a conversation and a few messages.
    for (let u = 0; u < counts.users; u++) {
      const { key } = await chat.createUser({ name: `User ${u}` })
      const conv = await chat.createConversation(key)
      const texts = u === 0 ? [`Where is the ${word}?`, HOSTILE] : [`hello ${u}`, `question ${u}`, 'thanks']
      for (const text of texts) await chat.createMessage(key, conv.id, { type: 'text', text })
      if (u === 0) {
        await chat.createMessage(key, conv.id, { type: 'markdown', markdown: `**bold** <iframe src="javascript:alert(1)"></iframe> [x](javascript:alert(1))` })
        conversationId = conv.id
      }
      counts.userMessages += texts.length + (u === 0 ? 1 : 0)
    }
    await h.store.appendBotLogs([{ id: randomUUID(), botId: h.credentials.botId, at: Date.now(), level: 'error', message: `turn failed in ${word}`, conversationId }])
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${h.baseUrl}/console/`)
    await page.getByLabel('Personal access token').fill(h.credentials.token)
    await page.keyboard.press('Enter')
    await page.getByText('Signed in as owner@localhost').waitFor()
  }

  it('without a session: the sign-in form, and no data', async () => {
    const context = await browser.newContext()
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    const res = await page.goto(`${h.baseUrl}/console/`)
    expect(res!.headers()['content-security-policy']).toContain("default-src 'none'")
    await page.getByRole('heading', { name: 'Sign in to the Parley console' }).waitFor()
    await page.getByLabel('Personal access token').fill('pat_wrong')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid access token')
    await page.screenshot({ path: artifactPath('console-sign-in.png') })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  it('signs in with a token, finds a conversation by a word, shows hostile HTML as text, exports it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    await signIn(page)
    const cookies = await context.cookies()
    expect(cookies.find((c) => c.name === 'parley_console')).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    expect(await page.evaluate(() => document.cookie)).toBe('') // HttpOnly: the page's script cannot read it

    await page.getByLabel('Search').fill(word)
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    const items = page.locator('ul.conversations button')
    await expect.poll(() => items.count()).toBe(1)
    await items.first().focus()
    await page.keyboard.press('Enter') // keyboard operable
    const transcript = page.locator('ol.transcript')
    await transcript.getByText(`Where is the ${word}?`).waitFor()
    // Hostile HTML: shown as its text, never as markup.
    await transcript.getByText(HOSTILE).waitFor()
    expect(await transcript.locator('img[src="x"], script, iframe').count()).toBe(0)
    expect(await transcript.locator('a[href^="javascript:"]').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    await transcript.getByText('bold').waitFor()
    // The bot's logs of the turn, inline.
    await page.getByText(/Bot logs of this turn \(1\)/).click()
    await page.getByText(`turn failed in ${word}`).waitFor()
    await page.screenshot({ path: artifactPath('console-conversations.png'), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()])
    const csv = parseDelimited(await readFile((await download.path())!, 'utf8'))
    expect(csv[0]![0]).toBe('conversationId')
    expect(csv.slice(1).map((r) => r[7])).toEqual([`Where is the ${word}?`, HOSTILE, ''])
    expect(new Set(csv.slice(1).map((r) => r[0]))).toEqual(new Set([conversationId]))
    const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()])
    const lines = (await readFile((await json.path())!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { type: string })
    expect(lines.map((l) => l.type)).toEqual(['text', 'text', 'markdown'])
    expect(errors).toEqual([])
  })

  it('the dashboard shows getBotAnalytics\' numbers (which match the scripted traffic), as charts and tables', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    await signIn(page)
    await page.getByRole('link', { name: 'Analytics' }).click()
    const today = new Date().toISOString().slice(0, 10)
    const row = (chart: string) => page.locator(`table[data-chart="${chart}"] tr`, { has: page.locator('th', { hasText: today }) })
    await row('messages').waitFor()
    expect(await page.locator('.uplot').count()).toBe(3)
    const cell = async (chart: string, key: string) => Number(await row(chart).locator(`td[data-key="${key}"]`).textContent())
    const admin = adminClient(h)
    const api = await admin('GET', `/bots/${h.credentials.botId}/analytics?startDate=${today}&endDate=${today}`)
    const record = api.body.records[0]
    expect(record.userMessages).toBe(counts.userMessages)
    expect(record.newUsers).toBe(counts.users)
    expect(await cell('messages', 'userMessages')).toBe(record.userMessages)
    expect(await cell('messages', 'botMessages')).toBe(record.botMessages)
    expect(await cell('users', 'newUsers')).toBe(record.newUsers)
    expect(await cell('users', 'returningUsers')).toBe(record.returningUsers)
    expect(await cell('sessions', 'sessions')).toBe(record.sessions)
    await page.screenshot({ path: artifactPath('console-analytics.png'), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  it('logs with a live tail; sign-in by one-time link; sign-out', async () => {
    const admin = adminClient(h)
    const link = await admin('POST', '/account/console-links', { workspaceId: null, body: {} })
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    await page.goto(link.body.url as string)
    await page.getByText('Signed in as owner@localhost').waitFor()
    expect(page.url()).not.toContain('link=') // the secret leaves the address bar
    await page.getByRole('link', { name: 'Logs' }).click()
    await page.locator('#logs').getByText(`turn failed in ${word}`).waitFor()
    await page.getByLabel('Live tail').check()
    const fresh = `tail line ${randomUUID()}`
    await h.store.appendBotLogs([{ id: randomUUID(), botId: h.credentials.botId, at: Date.now() + 1, level: 'info', message: fresh, conversationId: null }])
    await page.locator('#logs').getByText(fresh).waitFor({ timeout: 15_000 })
    await page.screenshot({ path: artifactPath('console-logs.png'), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole('link', { name: 'Inbox' }).click()
    await page.getByRole('heading', { name: 'Inbox' }).waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByText('You are signed out.').waitFor()
    await page.reload()
    await page.getByRole('heading', { name: 'Sign in to the Parley console' }).waitFor()
    expect(errors).toEqual([])
  })
})
