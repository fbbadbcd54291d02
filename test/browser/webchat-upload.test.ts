/**
 * File upload in Chromium: with the bot's uploadTypes set, the composer has an "Attach a file" button; a picture
 * goes through the Files API's signed upload URL and shows as the user's image message, a PDF as a file message;
 * a type outside the allowlist is refused with a message. At 1024 and 375 px, with screenshots and axe-core.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, watchErrors } from './browser.js'

const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="240" height="160"><rect width="240" height="160" fill="#0b6e4f"/><circle cx="120" cy="80" r="50" fill="#ffd166"/></svg>')

describeBrowser('webchat file upload in Chromium', () => {
  let h: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true }), launchBrowser()])
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    await admin.updateBot({ id: h.credentials.botId, integrations: { chat: { configuration: { webchat: { uploadTypes: 'image/*,application/pdf', uploadMaxBytes: 100_000 } } } } })
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  for (const width of [1024, 375]) {
    it(`attaches a picture and a PDF; refuses another type (${width} px)`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 } })
      onTestFinished(() => context.close())
      const page = await context.newPage()
      const errors = watchErrors(page)
      await openChat(page, h.credentials.chat.webchatUrl!)
      const attach = page.getByRole('button', { name: 'Attach a file' })
      await attach.waitFor()
      expect(await page.getAttribute('#pw-file', 'accept')).toBe('image/*,application/pdf')

      await page.setInputFiles('#pw-file', { name: 'sun.svg', mimeType: 'image/svg+xml', buffer: SVG })
      const image = page.locator('#pw-log article.pw-msg-mine img.pw-image')
      await image.waitFor()
      await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
      expect(new URL((await image.getAttribute('src'))!).pathname).toMatch(/^\/v1\/files\/content\//)

      await page.setInputFiles('#pw-file', { name: 'invoice.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%%EOF\n') })
      const file = page.locator('#pw-log article.pw-msg-mine a.pw-file', { hasText: 'invoice.pdf' })
      await file.waitFor()
      expect((await (await fetch((await file.getAttribute('href'))!)).text())).toContain('%PDF-1.4')

      await page.setInputFiles('#pw-file', { name: 'run.sh', mimeType: 'application/x-sh', buffer: Buffer.from('echo hi') })
      await expect.poll(() => page.locator('#pw-error').textContent()).toContain('does not accept run.sh')
      expect(await page.locator('#pw-log article.pw-msg-mine').count()).toBe(2)

      await page.screenshot({ path: artifactPath(`webchat-upload-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])
      expect(errors).toEqual([])
    })
  }

  it('the attach button is in the tab order before the message box', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    await openChat(page, h.credentials.chat.webchatUrl!)
    await page.focus('#pw-input')
    // backwards from the message box, through the composer's buttons (the emoji picker's sits between them)
    const seen: string[] = []
    for (let i = 0; i < 3 && !seen.includes('pw-attach'); i++) {
      await page.keyboard.press('Shift+Tab')
      seen.push(await page.evaluate(() => document.activeElement?.id ?? ''))
    }
    expect(seen).toContain('pw-attach')
  })
})
