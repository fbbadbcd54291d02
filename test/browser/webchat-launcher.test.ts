/**
 * embed.js's launcher on a page of another origin (a second tiny HTTP server: another port, so another origin):
 * - the minimal snippet (only data-webhook-id) shows the bot's own colour, icon and label, read cross-origin from
 *   GET /{webhookId}/webchat; a data-* attribute still wins; a host page whose CSP blocks the fetch gets the
 *   default launcher and no error;
 * - the unread badge: messages arriving while the panel is closed are counted on the launcher (in its accessible
 *   name too), in the bot's badge colour, and cleared when it opens; messages read with the panel open are not.
 * At 1024 px and 375 px (a phone, where the panel is full screen), with screenshots and axe-core.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser, Frame, Page } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { ChatApi } from '../../src/webchat/shared/chat-api.js'
import { artifactPath, describeBrowser, launchBrowser, secondParticipant, session, startMediaServer, watchErrors } from './browser.js'

const PURPLE = 'rgb(122, 31, 162)'

describeBrowser('embed.js launcher: bot settings across origins, unread badge', () => {
  let h: Harness
  let browser: Browser
  let media: Awaited<ReturnType<typeof startMediaServer>>
  let shop: Server
  let shopUrl: string

  beforeAll(async () => {
    ;[h, browser, media] = await Promise.all([startParley({ listen: true }), launchBrowser(), startMediaServer()])
    const res = await h.app.inject({
      method: 'PUT',
      url: `/v1/admin/bots/${h.credentials.botId}`,
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
      payload: { webchat: { botName: 'Ada', primaryColor: '#7a1fa2', launcherLabel: 'Ask Ada', launcherIconUrl: `${media.url}/icon.svg`, launcherBadgeColor: '#005a9c' } },
    })
    expect(res.statusCode, res.body).toBe(200)
    const embed = (attrs = '') => `<script src="${h.baseUrl}/webchat/embed.js" data-webhook-id="${h.credentials.chat.webhookId}"${attrs} async></script>`
    const pages: Record<string, { html: string; headers?: Record<string, string> }> = {
      // The minimal snippet, as docs/webchat.md shows it.
      '/minimal': { html: embed() },
      '/override': { html: embed(' data-primary-color="#0b6e4f"') },
      // A host page that allows the script and the frame but no fetch to Parley.
      '/strict': {
        html: embed(),
        headers: { 'content-security-policy': `default-src 'self'; script-src ${h.baseUrl}; frame-src ${h.baseUrl}; img-src ${media.url}; connect-src 'none'` },
      },
    }
    shop = createServer((req, res) => {
      const page = pages[req.url ?? '']
      if (!page) return void res.writeHead(404).end()
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...page.headers })
      res.end(`<!doctype html><html lang="en"><head><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title></head><body><main><h1>A shop</h1><p>Things for sale.</p></main>${page.html}</body></html>`)
    })
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`
    expect(new URL(shopUrl).origin).not.toBe(new URL(h.baseUrl).origin)
  })
  afterAll(async () => {
    await browser?.close()
    await new Promise<void>((resolve) => (shop ? shop.close(() => resolve()) : resolve()))
    await media?.close()
    await h?.close()
  })

  const background = (page: Page, selector: string) => page.locator(selector).evaluate((el) => getComputedStyle(el).backgroundColor)

  async function hostPage(path: string, width: number): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, ...(width < 500 && { isMobile: true, hasTouch: true }) })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    await page.goto(`${shopUrl}${path}`)
    await page.locator('.parley-webchat-embed[data-settings]').waitFor({ state: 'attached' })
    return { page, errors }
  }

  /** The webchat's iframe, once its page is ready. */
  async function chatFrame(page: Page): Promise<Frame> {
    await page.frameLocator('.parley-webchat-embed iframe').locator('#parley-webchat[data-state="ready"]').waitFor({ state: 'attached' })
    const frame = page.frames().find((f) => f.url().startsWith(`${h.baseUrl}/webchat/`))
    if (!frame) throw new Error('no webchat frame')
    return frame
  }

  for (const width of [1024, 375]) {
    it(`the minimal snippet's launcher shows the bot's colour, icon and label at ${width} px (read cross-origin)`, async () => {
      const { page, errors } = await hostPage('/minimal', width)
      expect(await page.locator('.parley-webchat-embed').getAttribute('data-settings')).toBe('bot')
      const launcher = page.getByRole('button', { name: 'Ask Ada' })
      await launcher.waitFor()
      expect(await background(page, '.parley-webchat-embed > button')).toBe(PURPLE)
      expect(await launcher.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(255, 255, 255)')
      await expect.poll(() => launcher.locator('img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
      expect(await page.getByRole('dialog', { includeHidden: true }).getAttribute('aria-label')).toBe('Ada')
      await page.screenshot({ path: artifactPath(`webchat-launcher-minimal-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])
      await launcher.click()
      const frame = await chatFrame(page)
      expect(await frame.locator('#pw-title').textContent()).toBe('Ada')
      expect(await frame.locator('#pw-send').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(PURPLE)
      expect(errors).toEqual([])
    })
  }

  it("the snippet's data-* attributes still win over the bot's settings", async () => {
    const { page, errors } = await hostPage('/override', 1024)
    expect(await page.locator('.parley-webchat-embed').getAttribute('data-settings')).toBe('bot')
    await page.getByRole('button', { name: 'Ask Ada' }).waitFor()
    expect(await background(page, '.parley-webchat-embed > button')).toBe('rgb(11, 110, 79)')
    expect(errors).toEqual([])
  })

  it("a host page whose CSP blocks the fetch gets the snippet's launcher, which still opens the chat", async () => {
    const { page, errors } = await hostPage('/strict', 1024)
    expect(await page.locator('.parley-webchat-embed').getAttribute('data-settings')).toBe('snippet')
    const launcher = page.getByRole('button', { name: 'Chat with us' })
    expect(await background(page, '.parley-webchat-embed > button')).toBe('rgb(43, 89, 195)')
    await launcher.click()
    const frame = await chatFrame(page)
    // The page itself applies the bot's settings (server-side): only the launcher lacked them.
    expect(await frame.locator('#pw-title').textContent()).toBe('Ada')
    expect(errors).toEqual([])
  })

  for (const width of [1024, 375]) {
    it(`counts messages that arrive while the panel is closed on the launcher at ${width} px, cleared when opened; accessible`, async () => {
      const { page, errors } = await hostPage('/minimal', width)
      const launcher = page.locator('.parley-webchat-embed > button')
      const badge = launcher.locator('.parley-webchat-badge')
      await launcher.click()
      const frame = await chatFrame(page)
      const agent = await secondParticipant(h.credentials.chat.url, frame)

      // Read with the panel open: not unread.
      await agent.say({ type: 'text', text: 'Welcome to the shop!' })
      await frame.locator('#pw-log article', { hasText: 'Welcome to the shop!' }).waitFor()
      await frame.getByRole('button', { name: 'Close chat' }).click()
      await expect.poll(() => launcher.getAttribute('aria-expanded')).toBe('false')
      expect(await launcher.getAttribute('data-unread')).toBe('0')
      expect(await badge.isVisible()).toBe(false)
      // While it is closed: the user's own message (from another client of the same user) is not counted, a
      // message posted by the host page itself is ignored, and two messages of the other side are.
      const me = await session(frame)
      await new ChatApi(h.credentials.chat.url, me.userKey).createMessage(me.conversationId, { type: 'text', text: 'From my phone' })
      await frame.locator('#pw-log article', { hasText: 'From my phone' }).waitFor({ state: 'attached' })
      await page.evaluate(() => window.postMessage({ type: 'parley:message', id: 'forged' }, '*'))
      expect(await launcher.getAttribute('data-unread')).toBe('0')
      await agent.say({ type: 'text', text: 'Your order has shipped.' })
      await agent.say({ type: 'text', text: 'It arrives on Monday.' })
      await frame.locator('#pw-log article', { hasText: 'It arrives on Monday.' }).waitFor({ state: 'attached' })
      await expect.poll(() => launcher.getAttribute('data-unread')).toBe('2')
      expect(await badge.textContent()).toBe('2')
      expect(await badge.isVisible()).toBe(true)
      expect(await badge.getAttribute('aria-hidden')).toBe('true')
      expect(await page.locator('.parley-webchat-embed').ariaSnapshot()).toBe('- button "Ask Ada (2 unread messages)"\n- status: 2 unread messages in the chat')
      expect(await page.getByRole('status').textContent()).toBe('2 unread messages in the chat')
      // The bot's badge colour, its text in the contrasting colour.
      expect(await badge.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(0, 90, 156)')
      expect(await badge.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(255, 255, 255)')
      // The badge sits on the launcher's top corner, inside the viewport.
      const [b, l] = [await badge.boundingBox(), await launcher.boundingBox()]
      expect(b!.y).toBeLessThan(l!.y)
      expect(b!.x + b!.width).toBeLessThanOrEqual(width)
      await page.screenshot({ path: artifactPath(`webchat-launcher-unread-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])

      // Opening reads them: the badge goes.
      await launcher.click()
      await frame.locator('#pw-log article', { hasText: 'It arrives on Monday.' }).waitFor()
      await expect.poll(() => launcher.getAttribute('data-unread')).toBe('0')
      expect(await badge.isHidden()).toBe(true)
      expect(await launcher.textContent()).toBe('Ask Ada') // no count left in its name (hidden while open on a phone)
      await frame.getByRole('button', { name: 'Close chat' }).click()
      // isVisible() does not wait: the launcher comes back once the panel has closed
      await page.getByRole('button', { name: 'Ask Ada', exact: true }).waitFor({ state: 'visible' })
      expect(errors).toEqual([])
    })
  }
})
