/**
 * Feedback buttons in Chromium: thumbs up/down under the bot's messages, keyboard operable (Tab to them, Space or
 * Enter), recorded on the message (read back through the Chat API), shown pressed again after a reload, at 1024 and
 * 375 px, with screenshots and an axe-core check.
 */
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser } from 'playwright-core'
import { ChatApi } from '../../src/webchat/shared/chat-api.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, session, typeAndSend, watchErrors } from './browser.js'

describeBrowser('webchat feedback in Chromium', () => {
  let demo: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[demo, browser] = await Promise.all([startParley({ listen: true, demoBot: true }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await demo?.close()
  })

  for (const width of [1024, 375]) {
    it(`thumbs up/down on a bot message, by keyboard, recorded and shown after a reload (${width} px)`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 } })
      onTestFinished(() => context.close())
      const page = await context.newPage()
      const errors = watchErrors(page)
      await openChat(page, demo.credentials.chat.webchatUrl!)
      const greeting = page.locator('#pw-log article.pw-msg-theirs', { hasText: 'I am the Parley demo bot' })
      await greeting.waitFor()
      await typeAndSend(page, 'help')
      await page.locator('#pw-log article.pw-msg-mine', { hasText: 'help' }).waitFor()
      // Only the bot's messages have them.
      expect(await page.locator('#pw-log article.pw-msg-mine .pw-feedback').count()).toBe(0)
      const group = greeting.getByRole('group', { name: 'Rate this answer' })
      const up = group.getByRole('button', { name: 'Helpful', exact: true })
      const down = group.getByRole('button', { name: 'Not helpful' })
      expect(await up.getAttribute('aria-pressed')).toBe('false')

      // Keyboard: focus the button, Space presses it.
      await up.focus()
      await page.keyboard.press('Space')
      await expect.poll(() => up.getAttribute('aria-pressed')).toBe('true')
      const messageId = (await greeting.getAttribute('data-message-id'))!
      const api = new ChatApi(demo.credentials.chat.url, (await session(page)).userKey)
      await expect.poll(async () => ((await api.listMessages((await session(page)).conversationId)).messages.find((m) => m.id === messageId)?.metadata as { feedback?: { value?: string } } | undefined)?.feedback?.value).toBe('positive')
      await page.screenshot({ path: artifactPath(`webchat-feedback-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])

      // Enter on the other one switches; a reload shows what is recorded.
      await down.focus()
      await page.keyboard.press('Enter')
      await expect.poll(() => down.getAttribute('aria-pressed')).toBe('true')
      expect(await up.getAttribute('aria-pressed')).toBe('false')
      await expect.poll(async () => ((await api.listMessages((await session(page)).conversationId)).messages.find((m) => m.id === messageId)?.metadata as { feedback?: { value?: string } } | undefined)?.feedback?.value).toBe('negative')
      await page.reload()
      await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
      await expect.poll(() => page.locator(`article[data-message-id="${messageId}"] [data-feedback="negative"]`).getAttribute('aria-pressed')).toBe('true')
      // Pressing the pressed one removes it.
      await page.locator(`article[data-message-id="${messageId}"] [data-feedback="negative"]`).click()
      await expect.poll(async () => (await api.listMessages((await session(page)).conversationId)).messages.find((m) => m.id === messageId)?.metadata).toBeUndefined()
      expect(errors).toEqual([])
    })
  }
})
