/**
 * The console in Chromium: sign in with a token (and with a one-time link), find a conversation by a word in it,
 * read its transcript (hostile HTML and markdown rendered inert, as text), export it (the downloaded file's
 * content), read the analytics dashboard after scripted traffic (its numbers match getBotAnalytics and
 * getBotQualityAnalytics, which match counts made here: messages, users, sessions, and, after the scripted day of
 * test/helpers/quality-day.ts, handoffs and their waits, failed and timed-out turns, unanswered knowledge questions
 * and feedback), read the logs with a live tail; screenshots as artifacts, axe-core with no serious violation.
 */
import { readFile } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { ChatClient } from '../helpers/chat-client.js'
import { parseDelimited } from '../../src/lib/csv.js'
import { QUALITY_DAY_CONFIG, scriptedQualityDay, sumRecords, type QualityDayCounts } from '../helpers/quality-day.js'
import { seriousViolations } from './axe.js'
import { llmCall } from '../helpers/llm-calls.js'
import { artifactPath, describeBrowser, launchBrowser, watchErrors } from './browser.js'

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'
const HOSTILE_ERROR = 'upstream: <img src=y onerror="window.__pwned=2">'

describeBrowser('the console in Chromium', () => {
  let h: Harness
  let browser: Browser
  const word = `platypus${randomUUID().slice(0, 6)}`
  let conversationId: string
  const counts = { users: 3, userMessages: 0 }
  let day: { bot: { id: string }; counts: QualityDayCounts }
  const llmCalls = [
    { inputTokens: 120, outputTokens: 45, inputCost: 0.0125, outputCost: 0.025 },
    { inputTokens: 30, outputTokens: 0, inputCost: 0, outputCost: 0, error: 'The provider answered 500' },
  ]

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true, config: QUALITY_DAY_CONFIG }), launchBrowser()])
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
    // The turn's model calls (the trace), one with a hostile error text: shown as text.
    h.app.services.llmUsage.record(llmCall(h.credentials.workspaceId, h.credentials.botId, Date.now(), { conversationId, via: 'agent', model: 'agent-model', inputTokens: 300, outputTokens: 20, inputCost: 0.003, outputCost: 0.002, latencyMs: 840 }))
    h.app.services.llmUsage.record(llmCall(h.credentials.workspaceId, h.credentials.botId, Date.now() + 1, { conversationId, via: 'knowledge', inputTokens: 50, outputTokens: 0, inputCost: 0, outputCost: 0, latencyMs: 12, error: HOSTILE_ERROR }))
    // A second bot's scripted day for the dashboard's other series (a handoff with a wait, failing turns, knowledge, feedback).
    day = await scriptedQualityDay(h)
    // Its language-model calls, as the gateway records them (no provider involved): the LLM charts' numbers.
    for (const call of llmCalls) await h.app.services.llmUsage.record(llmCall(h.credentials.workspaceId, day.bot.id, Date.now(), call))
  }, 180_000)
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${h.baseUrl}/console/`)
    await page.getByLabel('Personal access token').fill(h.credentials.token)
    await page.keyboard.press('Enter')
    await page.getByText('Signed in as owner@localhost').waitFor()
    await page.selectOption('#bot', h.credentials.botId) // the demo bot (the scripted day's bot is the other one)
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
    // The turn's model calls: what for, the model, tokens, cost, time and error, as a table.
    await page.getByText('Model calls of this turn (2: 370 tokens, $0.0050)').click()
    const rows = transcript.locator('details.model-calls tbody tr')
    expect(await rows.nth(0).locator('td').allTextContents()).toEqual(['agent', 'local:agent-model', '300 / 20', '$0.0050', '840 ms', ''])
    expect(await rows.nth(1).locator('td').allTextContents()).toEqual(['knowledge', 'local:m1', '50 / 0', '$0.0000', '12 ms', HOSTILE_ERROR])
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
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

  it('the dashboard shows getBotAnalytics\' and getBotQualityAnalytics\' numbers (which match the scripted traffic), as charts and tables; a refused range is an alert', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    await signIn(page)
    await page.getByRole('link', { name: 'Analytics' }).click()
    const today = new Date().toISOString().slice(0, 10)
    const row = (chart: string) => page.locator(`table[data-chart="${chart}"] tr`, { has: page.locator('th', { hasText: today }) })
    await row('messages').waitFor()
    expect(await page.locator('.uplot').count()).toBe(11)
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

    // The scripted day's bot: every chart's table, summed over the shown range, equals the two operations' records
    // of that range, which equal what the script counted.
    await page.selectOption('#bot', day.bot.id)
    await page.locator('table[data-chart="feedback"] tbody tr').first().waitFor()
    const [startDate, endDate] = [await page.inputValue('#start'), await page.inputValue('#end')]
    const activity = (await admin('GET', `/bots/${day.bot.id}/analytics?startDate=${startDate}&endDate=${endDate}`)).body.records
    const quality = (await admin('GET', `/bots/${day.bot.id}/analytics/quality?startDate=${startDate}&endDate=${endDate}`)).body.records
    const column = async (chart: string, key: string) => (await page.locator(`table[data-chart="${chart}"] td[data-key="${key}"]`).evaluateAll(
      (tds) => tds.map((td) => Number(td.getAttribute('data-value')))))
    const shownSum = async (chart: string, key: string) => (await column(chart, key)).reduce((a, b) => a + b, 0)
    const apiSums = { ...sumRecords(activity), ...sumRecords(quality) }
    const c = day.counts
    const expected: Array<[string, string, number]> = [
      ['messages', 'userMessages', c.userMessages], ['messages', 'botMessages', c.botMessages],
      ['users', 'newUsers', c.users], ['sessions', 'sessions', c.users],
      ['handoffs', 'handoffsRequested', c.handoffsRequested], ['handoffs', 'handoffsClaimed', c.handoffsClaimed],
      ['turns', 'failedTurns', c.failedTurns], ['turns', 'timedOutTurns', c.timedOutTurns],
      ['knowledge', 'knowledgeSearches', c.knowledgeSearches], ['knowledge', 'knowledgeNoAnswer', c.knowledgeNoAnswer],
      ['feedback', 'positiveFeedback', c.positiveFeedback], ['feedback', 'negativeFeedback', c.negativeFeedback],
    ]
    for (const [chart, key, n] of expected) {
      expect([key, apiSums[key]]).toEqual([key, n])
      expect([key, await shownSum(chart, key)]).toEqual([key, n])
    }
    // The LLM charts: getBotAnalytics' llm figures, which are the recorded calls'.
    const llm = (key: 'calls' | 'errors' | 'inputTokens' | 'outputTokens') => activity.reduce((sum: number, rec: any) => sum + rec.llm[key], 0)
    const sent = { calls: llmCalls.length, errors: 1, inputTokens: 150, outputTokens: 45 }
    for (const [chart, key, apiKey] of [['llm-calls', 'llmCalls', 'calls'], ['llm-calls', 'llmErrors', 'errors'], ['llm-tokens', 'llmInputTokens', 'inputTokens'], ['llm-tokens', 'llmOutputTokens', 'outputTokens']] as const) {
      expect([key, llm(apiKey)]).toEqual([key, sent[apiKey]])
      expect([key, await shownSum(chart, key)]).toEqual([key, sent[apiKey]])
    }
    expect(await shownSum('llm-cost', 'llmCost')).toBeCloseTo(0.0375, 9)
    await expect.poll(() => row('llm-cost').locator('td[data-key="llmCost"]').textContent()).toBe('0.0375')
    // The wait: the one claimed handoff's, on its day (the table's row with a claim), as the script measured it.
    const claimedDay = (await column('handoffs', 'handoffsClaimed')).findIndex((n) => n > 0)
    const waits = await column('handoff-wait', 'handoffWaitMeanSeconds')
    expect(waits[claimedDay]).toBeCloseTo(c.handoffWaitsSeconds[0]!, 3)
    expect(quality[claimedDay].handoffWaitMeanSeconds).toBe(waits[claimedDay])
    expect((await column('handoff-wait', 'handoffWaitMaxSeconds'))[claimedDay]).toBeCloseTo(Math.max(...c.handoffWaitsSeconds), 3)
    // A row per day of the range; a chart per table.
    expect((await column('turns', 'failedTurns')).length).toBe(quality.length)
    expect(await page.locator('section.panel:has(table[data-chart]) .uplot').count()).toBe(11)
    await page.screenshot({ path: artifactPath('console-analytics.png'), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])
    // A range the operations refuse: their message in an alert, no charts.
    await page.fill('#start', endDate)
    await page.fill('#end', startDate)
    await page.getByRole('button', { name: 'Show' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/The analytics could not be read: endDate .* is before startDate/)
    expect(await page.locator('.uplot').count()).toBe(0)
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
    await page.selectOption('#bot', h.credentials.botId)
    await page.getByRole('link', { name: 'Logs' }).click()
    await page.locator('#logs').getByText(`turn failed in ${word}`).waitFor()
    await page.getByLabel('Live tail').check()
    const fresh = `tail line ${randomUUID()}`
    await h.store.appendBotLogs([{ id: randomUUID(), botId: h.credentials.botId, at: Date.now() + 1, level: 'info', message: fresh, conversationId: null }])
    await page.locator('#logs').getByText(fresh).waitFor({ timeout: 15_000 })
    await page.screenshot({ path: artifactPath('console-logs.png'), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])

    // An integration installed on the bot (served at a port nobody listens on): its logs are a source of their own,
    // with this bot's lines only.
    const definition = await admin('POST', '/integrations', { body: { name: `outside-${randomUUID().slice(0, 8)}`, version: '1.0.0', url: 'http://127.0.0.1:9/' } })
    expect(definition.status, definition.text).toBe(201)
    const integrationId = definition.body.integration.id as string
    const installed = await admin('PUT', `/bots/${h.credentials.botId}`, { body: { integrations: { outside: { integrationId, enabled: true, configuration: {} } } } })
    expect(installed.status, installed.text).toBe(200)
    const [mine, theirs] = [`delivery to outside failed ${randomUUID()}`, `another bot's line ${randomUUID()}`]
    await h.store.integrations.appendLogs([
      { id: randomUUID(), definitionId: integrationId, botId: h.credentials.botId, at: Date.now(), level: 'error', message: mine, conversationId: null },
      { id: randomUUID(), definitionId: integrationId, botId: randomUUID(), at: Date.now(), level: 'error', message: theirs, conversationId: null },
    ])
    // The page lists the bot's integrations when it opens: open it again
    await page.getByRole('link', { name: 'Inbox' }).click()
    await page.getByRole('heading', { name: 'Inbox' }).waitFor()
    await page.getByRole('link', { name: 'Logs' }).click()
    await page.locator('#log-source option', { hasText: 'integration outside' }).waitFor({ state: 'attached' })
    await page.selectOption('#log-source', integrationId)
    await page.locator('#logs').getByText(mine).waitFor()
    expect(await page.locator('#logs').getByText(theirs).count()).toBe(0)
    expect(await page.locator('#logs').getByText(fresh).count()).toBe(0) // the bot's own lines are the other source
    await page.screenshot({ path: artifactPath('console-integration-logs.png'), fullPage: true })
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
