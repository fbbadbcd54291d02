/**
 * The bot's webchat settings in Chromium: set through the Admin API (official client), applied by the page (name,
 * avatar, description, colour, font, radius, theme, placeholder), overridden by the page's URL and by embed.js's
 * data-* attributes (launcher label, colour, side), at 1024 and 375 px, with screenshots and an axe-core check.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, startMediaServer, watchErrors } from './browser.js'

const css = (page: Page, selector: string, property: string) =>
  page.locator(selector).evaluate((el, p) => getComputedStyle(el).getPropertyValue(p).trim(), property)

describeBrowser('webchat settings in Chromium', () => {
  let h: Harness
  let browser: Browser
  let media: Awaited<ReturnType<typeof startMediaServer>>
  let client: Client

  beforeAll(async () => {
    ;[h, browser, media] = await Promise.all([startParley({ listen: true }), launchBrowser(), startMediaServer()])
    client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    await client.updateBot({
      id: h.credentials.botId,
      integrations: {
        chat: {
          configuration: {
            webchat: {
              botName: 'Ada from Support',
              botAvatarUrl: `${media.url}/ada.svg`,
              botDescription: 'Answers questions about your orders',
              primaryColor: '#0b6e4f',
              fontFamily: 'Georgia, serif',
              radius: 4,
              themeMode: 'light',
              composerPlaceholder: 'Ask Ada anything…',
            },
          },
        },
      },
    })
  })
  afterAll(async () => {
    await browser?.close()
    await media?.close()
    await h?.close()
  })

  for (const width of [1024, 375]) {
    it(`applies the bot's settings at ${width} px: identity, theme, placeholder; accessible`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: 'dark' })
      onTestFinished(() => context.close())
      const page = await context.newPage()
      const errors = watchErrors(page)
      await openChat(page, h.credentials.chat.webchatUrl!)
      expect(await page.locator('#pw-title').textContent()).toBe('Ada from Support')
      expect(await page.title()).toBe('Ada from Support')
      expect(await page.locator('#pw-description').textContent()).toBe('Answers questions about your orders')
      expect(await page.locator('#pw-description').isVisible()).toBe(true)
      await expect.poll(() => page.locator('#pw-avatar').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
      expect(await page.getAttribute('#pw-input', 'placeholder')).toBe('Ask Ada anything…')
      // themeMode light wins over the browser's dark preference.
      expect(await page.getAttribute('html', 'data-theme')).toBe('light')
      expect(await css(page, 'body', 'background-color')).toBe('rgb(245, 246, 248)')
      expect(await css(page, '#pw-send', 'background-color')).toBe('rgb(11, 110, 79)')
      expect(await css(page, '#pw-send', 'color')).toBe('rgb(255, 255, 255)')
      expect(await css(page, 'body', 'font-family')).toBe('Georgia, serif')
      await page.fill('#pw-input', 'hello Ada')
      await page.press('#pw-input', 'Enter')
      const bubble = page.locator('#pw-log article.pw-msg-mine .pw-bubble', { hasText: 'hello Ada' })
      await bubble.waitFor()
      expect(await bubble.evaluate((el) => getComputedStyle(el).borderTopLeftRadius)).toBe('4px')
      expect(await bubble.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(11, 110, 79)')
      await page.screenshot({ path: artifactPath(`webchat-settings-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])
      expect(errors).toEqual([])
    })
  }

  it('the page URL overrides settings (bad values are dropped); themeMode dark', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 }, colorScheme: 'light' })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    const url = new URL(h.credentials.chat.webchatUrl!)
    url.searchParams.set('botName', 'Override')
    url.searchParams.set('themeMode', 'dark')
    url.searchParams.set('primaryColor', 'red; background: url(https://evil.example)') // dropped
    url.searchParams.set('radius', '20')
    await openChat(page, url.href)
    expect(await page.locator('#pw-title').textContent()).toBe('Override')
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark')
    expect(await css(page, 'body', 'background-color')).toBe('rgb(18, 20, 22)')
    expect(await css(page, '#pw-send', 'background-color')).toBe('rgb(11, 110, 79)') // the bot's colour stays
    expect(await css(page, 'html', '--pw-radius')).toBe('20px')
    await page.screenshot({ path: artifactPath('webchat-settings-dark-375.png') })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  it('embed.js: data-* attributes set the launcher (label, colour, side) and override the page\'s settings', async () => {
    const { code } = await client.getBotWebchat({ id: h.credentials.botId, type: 'preconfigured' })
    // The site edits the snippet: its own launcher, colour and name over the bot's.
    expect(code).toContain('data-primary-color="#0b6e4f"')
    const snippet = code
      .replace('data-primary-color="#0b6e4f"', 'data-primary-color="#7a1fa2"')
      .replace('data-bot-name="Ada from Support"', 'data-bot-name="Ada (shop)"')
      .replace('async></script>', 'data-launcher-label="Talk to Ada" data-launcher-position="left" async></script>')
    const shop = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(`<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>A shop</h1></main>${snippet}</body></html>`)
    })
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
    onTestFinished(() => new Promise<void>((resolve) => shop.close(() => resolve())))
    for (const width of [1024, 375]) {
      const context = await browser.newContext({ viewport: { width, height: 800 } })
      const page = await context.newPage()
      const errors = watchErrors(page)
      await page.goto(`http://127.0.0.1:${(shop.address() as AddressInfo).port}/`)
      const launcher = page.getByRole('button', { name: 'Talk to Ada' })
      await launcher.waitFor()
      expect(await launcher.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(122, 31, 162)')
      const box = await launcher.boundingBox()
      expect(box!.x).toBeLessThan(width / 2) // on the left
      await launcher.click()
      const frame = page.frameLocator('iframe[title="Ada (shop)"]')
      await frame.locator('#parley-webchat[data-state="ready"]').waitFor({ state: 'attached' })
      await expect.poll(() => frame.locator('#pw-title').textContent()).toBe('Ada (shop)')
      expect(await frame.locator('#pw-send').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(122, 31, 162)')
      expect(await frame.locator('#pw-description').textContent()).toBe('Answers questions about your orders')
      await page.screenshot({ path: artifactPath(`webchat-settings-embed-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])
      expect(errors).toEqual([])
      await context.close()
    }
  })
})
