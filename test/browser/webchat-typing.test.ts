/**
 * The typing indicator in Chromium: a bot whose turn takes a while shows "… is typing…" under the log until its
 * answer arrives, at 1024 and 375 px, with screenshots and an axe-core check while it shows.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, typeAndSend, watchErrors } from './browser.js'

const SLOW_BOT = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    const until = Date.now() + 2500
    while (Date.now() < until) {}
    await client.createMessage({ payload: { type: 'text', text: 'done thinking about ' + event.payload.text } })
  },
}
`

describeBrowser('webchat typing indicator in Chromium', () => {
  let h: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true, config: { sseKeepAliveMs: 1000 } }), launchBrowser()])
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    await admin.updateBot({ id: h.credentials.botId, code: SLOW_BOT, integrations: { chat: { configuration: { webchat: { botName: 'Ada' } } } } })
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  for (const width of [1024, 375]) {
    it(`shows "Ada is typing…" while the bot's turn runs, hides it with the answer (${width} px)`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 } })
      onTestFinished(() => context.close())
      const page = await context.newPage()
      const errors = watchErrors(page)
      await openChat(page, h.credentials.chat.webchatUrl!)
      const typing = page.locator('#pw-typing')
      await expect.poll(() => typing.isVisible()).toBe(false)
      await typeAndSend(page, `question at ${width}`)
      await typing.waitFor({ state: 'visible' })
      expect(await typing.textContent()).toBe('Ada is typing…')
      expect(await typing.getAttribute('role')).toBe('status')
      await page.screenshot({ path: artifactPath(`webchat-typing-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])
      await page.locator('#pw-log article.pw-msg-theirs', { hasText: `done thinking about question at ${width}` }).waitFor()
      await typing.waitFor({ state: 'hidden' })
      expect(errors).toEqual([])
    })
  }
})
