/**
 * A knowledge answer in the webchat, in Chromium (issue #29): the model's reply shows piece by piece in a draft bubble
 * while it streams (`message_stream_delta`), then as the bot's message with its sources under it (`metadata.citations`,
 * the file and its quote behind a disclosure) instead of the text's `Sources:` line. Screenshots while streaming and
 * once complete; axe-core on the finished page. No model can run here: the model is the tests' OpenAI-compatible
 * stand-in (test/helpers/llm-stand-in.ts), which paces its streamed answer so the draft can be seen.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser } from 'playwright-core'
import type { Harness } from '../helpers/harness.js'
import { parleyWithStandIn, type LlmStandIn } from '../helpers/llm-stand-in.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, typeAndSend, watchErrors } from './browser.js'

const CODE = String.raw`
export const workflows = {
  faq: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'knowledge', noAnswer: 'I do not know that.' }] } } },
}
`
const MUSEUM = 'The museum opens at 10:00 every day except Monday. Tickets are sold at the door until 17:30.'

describeBrowser('webchat: a streamed knowledge answer and its sources in Chromium', () => {
  let llm: Awaited<ReturnType<typeof parleyWithStandIn>>
  let h: Harness
  let standIn: LlmStandIn
  let browser: Browser

  beforeAll(async () => {
    ;[llm, browser] = await Promise.all([
      parleyWithStandIn((url) => [{ name: 'local', kind: 'openai', url, models: ['kb-model'] }], { config: { sseKeepAliveMs: 1000 } }),
      launchBrowser(),
    ])
    ;({ h, standIn } = llm)
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    await admin.updateBot({ id: h.credentials.botId, code: CODE })
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: h.credentials.botId })
    await files.uploadFile({ key: 'visitor-guide.md', content: `# Visitor guide\n\n## Opening hours\n\n${MUSEUM}`, index: true })
    await h.app.services.files.knowledge.idle()
  })
  afterAll(async () => {
    await browser?.close()
    await llm?.close()
  })

  it('the draft grows while the answer streams; the answer then shows with its sources', async () => {
    // Paced: each word 120 ms after the last, so the draft is on screen for well over a second.
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    standIn.answer = () => ({ text: 'The museum opens at 10:00, every day except Monday [1]. Tickets are sold at the door [1].', paceMs: 120, gate: released })
    const context = await browser.newContext({ viewport: { width: 480, height: 760 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    await openChat(page, h.credentials.chat.webchatUrl!)
    await typeAndSend(page, 'When does the museum open?')
    release()
    const draft = page.locator('#pw-log article.pw-streaming')
    await draft.waitFor({ state: 'visible' })
    await expect.poll(async () => (await draft.textContent())?.length ?? 0).toBeGreaterThan(20)
    const partial = (await draft.textContent())!
    expect('The museum opens at 10:00, every day except Monday. Tickets are sold at the door.'.startsWith(partial.trim())).toBe(true)
    expect(await draft.getAttribute('aria-hidden')).toBe('true')
    await page.screenshot({ path: artifactPath('webchat-knowledge-streaming.png') })

    const answer = page.locator('#pw-log article.pw-msg-theirs:not(.pw-streaming)', { hasText: 'Tickets are sold at the door.' })
    await answer.waitFor()
    await draft.waitFor({ state: 'detached' })
    expect(await answer.locator('.pw-bubble').textContent()).toBe('The museum opens at 10:00, every day except Monday. Tickets are sold at the door.')
    const sources = answer.locator('.pw-sources')
    expect(await sources.getAttribute('aria-label')).toBe('Sources')
    expect(await sources.locator('li').allTextContents()).toEqual([expect.stringContaining('visitor-guide.md')])
    await sources.locator('summary').click()
    await expect.poll(() => sources.locator('.pw-source-quote').isVisible()).toBe(true)
    expect(await sources.locator('.pw-source-quote').textContent()).toContain('The museum opens at 10:00')
    await page.screenshot({ path: artifactPath('webchat-knowledge-answer.png') })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })
})
