import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, afterEach, expect, it, onTestFinished } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import type { MessagePayload } from '../../src/webchat/shared/types.js'
import { artifactPath, describeBrowser, startMediaServer, launchBrowser, openChat, secondParticipant, session, typeAndSend, watchErrors } from './browser.js'

const mine = (page: Page, text: string) => page.locator('#pw-log article.pw-msg-mine', { hasText: text })
const theirs = (page: Page, text?: string) => page.locator('#pw-log article.pw-msg-theirs', text === undefined ? {} : { hasText: text })

describeBrowser('webchat in Chromium', () => {
  /** The demo bot answers every message (its code runs); `h` has a bot without code, so tests see exactly what they send. */
  let demo: Harness
  let h: Harness
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let errors: string[]

  beforeAll(async () => {
    ;[demo, h, browser] = await Promise.all([startParley({ listen: true, demoBot: true }), startParley({ listen: true }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await Promise.all([demo?.close(), h?.close()])
  })
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1024, height: 800 } })
    page = await context.newPage()
    errors = watchErrors(page)
  })
  afterEach(async () => {
    expect(errors).toEqual([])
    await context.close()
  })

  it('opens the page, sends a message and shows it and the demo bot\'s answer', async () => {
    const url = demo.credentials.chat.webchatUrl!
    expect(url).toBe(`${demo.baseUrl}/webchat/${demo.credentials.chat.webhookId}`)
    const { userId, conversationId } = await openChat(page, url)
    await expect.poll(() => page.locator('#pw-status').textContent()).toBe('Online')
    await typeAndSend(page, 'hello')
    await mine(page, 'hello').waitFor()
    await theirs(page).first().waitFor()
    // The input is cleared and keeps the focus.
    expect(await page.inputValue('#pw-input')).toBe('')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pw-input')
    // The bot's message is the bot's, not ours; every message is shown once.
    expect(await theirs(page).first().getAttribute('data-user-id')).not.toBe(userId)
    await typeAndSend(page, 'second message')
    await mine(page, 'second message').waitFor()
    await page.waitForTimeout(300)
    expect(await mine(page, 'hello').count()).toBe(1)
    const ids = await page.$$eval('#pw-log article', (els) => els.map((e) => e.getAttribute('data-message-id')))
    expect(new Set(ids).size).toBe(ids.length)

    // A reload keeps the same user and conversation (localStorage) and shows the history.
    await page.reload()
    await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
    expect((await session(page)).conversationId).toBe(conversationId)
    await mine(page, 'hello').waitFor()
    expect(await mine(page, 'second message').count()).toBe(1)
    await page.screenshot({ path: artifactPath('webchat-demo.png') })
  })

  it('the demo bot greets when the chat opens, before anything is typed; `help` is then answered with the help menu', async () => {
    await openChat(page, demo.credentials.chat.webchatUrl!)
    // Nothing typed yet: the greeting arrives on its own.
    await theirs(page, 'I am the Parley demo bot').waitFor()
    expect(await page.locator('#pw-log article.pw-msg-mine').count()).toBe(0)
    await typeAndSend(page, 'help')
    await mine(page, 'help').waitFor()
    await page.getByRole('button', { name: 'Show text' }).waitFor()
    await page.getByRole('button', { name: 'Sign up' }).waitFor()
    await page.waitForTimeout(300)
    expect(await theirs(page, 'I am the Parley demo bot').count()).toBe(1)
    await page.screenshot({ path: artifactPath('webchat-greeting-help.png') })
  })

  it('sends a choice\'s value and a card postback\'s value as messages when clicked (the bubble shows the label)', async () => {
    await openChat(page, h.credentials.chat.webchatUrl!)
    const agent = await secondParticipant(h.credentials.chat.url, page)
    await agent.say({ type: 'choice', text: 'Pick a colour', options: [{ label: 'Red', value: 'red-value' }, { label: 'Blue', value: 'blue-value' }] })
    await page.getByRole('button', { name: 'Red' }).click()
    await mine(page, 'Red').waitFor()
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pw-input')

    await agent.say({
      type: 'card', title: 'A card', subtitle: 'with actions', actions: [
        { action: 'postback', label: 'Do it', value: 'postback-value' },
        { action: 'say', label: 'Say it', value: 'say-value' },
        { action: 'url', label: 'Docs', value: 'https://example.com/docs' },
      ],
    })
    await page.getByRole('button', { name: 'Do it' }).click()
    await mine(page, 'Do it').waitFor()
    await page.getByRole('button', { name: 'Say it' }).click()
    await mine(page, 'say-value').waitFor()
    const link = page.getByRole('link', { name: /Docs/ })
    expect(await link.getAttribute('href')).toBe('https://example.com/docs')
    expect(await link.getAttribute('target')).toBe('_blank')
    expect(await link.getAttribute('rel')).toContain('noopener')

    // Dropdown: pick an option, then Send.
    await agent.say({ type: 'dropdown', text: 'Pick a country', options: [{ label: 'Canada', value: 'CA' }, { label: 'Japan', value: 'JP' }] })
    await page.getByLabel('Pick a country').selectOption({ label: 'Japan' })
    await page.locator('.pw-dropdown button', { hasText: 'Send' }).click()
    await mine(page, 'Japan').waitFor()

    // Keyboard only: focus a choice button, press Enter.
    await agent.say({ type: 'choice', text: 'Keyboard?', options: [{ label: 'Yes please', value: 'keyboard-yes' }] })
    await page.getByRole('button', { name: 'Yes please' }).focus()
    await page.keyboard.press('Enter')
    await mine(page, 'Yes please').waitFor()
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pw-input')
    // What the bot received: the values.
    const me = await session(page)
    const sent = (await agent.api.listMessages(me.conversationId)).messages.filter((m) => m.userId === me.userId).map((m) => (m.payload as { text?: string }).text)
    expect(sent.reverse()).toEqual(['red-value', 'postback-value', 'say-value', 'JP', 'keyboard-yes'])
  })

  it('renders every payload type, mine and the other side\'s, and saves a screenshot', async () => {
    await openChat(page, h.credentials.chat.webchatUrl!)
    const agent = await secondParticipant(h.credentials.chat.url, page)
    const media = await startMediaServer()
    onTestFinished(() => media.close())
    const img = `${media.url}/picture.svg`
    const payloads = [
      { type: 'text', text: 'Plain text\non two lines' },
      { type: 'markdown', markdown: '**Bold**, _emphasis_, `code` and a [link](https://example.com)\n\n- one\n- two' },
      { type: 'image', imageUrl: img },
      { type: 'audio', audioUrl: 'https://example.com/a.mp3' },
      { type: 'video', videoUrl: 'https://example.com/v.mp4' },
      { type: 'file', fileUrl: 'https://example.com/report.pdf', title: 'Report' },
      { type: 'location', latitude: 45.5017, longitude: -73.5673, address: 'Montréal, QC', title: 'Office' },
      { type: 'card', title: 'Card title', subtitle: 'Card subtitle', imageUrl: img, actions: [{ action: 'postback', label: 'Card action', value: 'x' }] },
      { type: 'carousel', items: [
        { type: 'card', title: 'Slide one', actions: [{ action: 'postback', label: 'One', value: '1' }] },
        { type: 'card', title: 'Slide two', actions: [{ action: 'url', label: 'Two', value: 'https://example.com/2' }] },
      ] },
      { type: 'choice', text: 'Choose', options: [{ label: 'Option A', value: 'a' }] },
      { type: 'dropdown', text: 'Select one', options: [{ label: 'Item 1', value: '1' }] },
      { type: 'bloc', items: [{ type: 'text', text: 'Bloc text' }, { type: 'markdown', markdown: '*bloc markdown*' }, { type: 'file', fileUrl: 'https://example.com/b.txt' }] },
    ] satisfies MessagePayload[]
    for (const payload of payloads) await agent.say(payload)
    await page.locator('#pw-log article.pw-type-bloc').waitFor()
    const log = page.locator('#pw-log')
    expect(await log.locator('article.pw-msg-theirs').count()).toBeGreaterThanOrEqual(payloads.length)
    expect(await log.locator('.pw-text', { hasText: 'Plain text' }).textContent()).toBe('Plain text\non two lines')
    expect(await log.locator('.pw-markdown strong').first().textContent()).toBe('Bold')
    expect(await log.locator('.pw-markdown li').count()).toBeGreaterThanOrEqual(2)
    expect(await log.locator('img.pw-image').getAttribute('alt')).toBe('Image')
    expect(await log.locator('audio').getAttribute('src')).toBe('https://example.com/a.mp3')
    expect(await log.locator('video').getAttribute('src')).toBe('https://example.com/v.mp4')
    expect(await log.locator('a.pw-file', { hasText: 'Report' }).getAttribute('href')).toBe('https://example.com/report.pdf')
    expect(await log.locator('a.pw-location-link').getAttribute('href')).toContain('openstreetmap.org/?mlat=45.501700&mlon=-73.567300')
    expect(await log.locator('.pw-card-title', { hasText: 'Card title' }).count()).toBe(1)
    expect(await log.locator('.pw-carousel .pw-card').count()).toBe(2)
    expect(await log.locator('.pw-carousel-wrap').getAttribute('aria-roledescription')).toBe('carousel')
    expect(await page.getByRole('button', { name: 'Option A' }).count()).toBe(1)
    expect(await page.getByLabel('Select one').count()).toBe(1)
    expect(await log.locator('.pw-bloc > *').count()).toBe(3)
    // Screen-reader text says who wrote each message; the log is a polite live region.
    expect(await log.getAttribute('role')).toBe('log')
    expect(await log.locator('article.pw-msg-theirs .pw-sr-only').first().textContent()).toMatch(/said:/)

    // The user's own messages of any type render on the user's side.
    const me = await session(page)
    const { ChatApi } = await import('../../src/webchat/shared/chat-api.js')
    await new ChatApi(h.credentials.chat.url, me.userKey).createMessage(me.conversationId, { type: 'location', latitude: 1, longitude: 2, title: 'My place' })
    await page.locator('#pw-log article.pw-msg-mine a.pw-location-link', { hasText: 'My place' }).waitFor()

    // The whole conversation in one picture: a viewport tall enough for every message.
    await page.setViewportSize({ width: 1024, height: 3000 })
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#pw-log img')).every((i) => (i as HTMLImageElement).complete))
    await page.screenshot({ path: artifactPath('webchat.png') })
  })

  it('renders a bot\'s bloc sent through the Runtime API in its { type, payload } shape (docs/runtime-api.md, "Message shapes")', async () => {
    const { conversationId } = await openChat(page, h.credentials.chat.webchatUrl!)
    const bot = await runtimeClient(h)
    await bot.createMessage({
      conversationId, userId: h.credentials.botId, tags: {}, type: 'bloc',
      payload: { items: [{ type: 'text', payload: { text: 'Runtime bloc text' } }, { type: 'file', payload: { fileUrl: 'https://example.com/r.txt', title: 'R' } }] },
    })
    await page.locator('#pw-log article.pw-type-bloc').waitFor()
    const log = page.locator('#pw-log')
    expect(await log.locator('.pw-bloc > *').count()).toBe(2)
    expect(await log.locator('.pw-bloc .pw-text').textContent()).toBe('Runtime bloc text')
    expect(await log.locator('.pw-bloc a.pw-file').getAttribute('href')).toBe('https://example.com/r.txt')
  })

  it('runs no script from a markdown, text or card payload', async () => {
    await openChat(page, h.credentials.chat.webchatUrl!)
    const agent = await secondParticipant(h.credentials.chat.url, page)
    const evil = [
      'Hi <img src=x onerror="window.__pwned = \'img\'">',
      '<script>window.__pwned = \'script\'</script>',
      '<svg onload="window.__pwned = \'svg\'"></svg> <iframe src="javascript:parent.__pwned=\'iframe\'"></iframe>',
      '[click me](javascript:window.__pwned=\'link\') ![pic](javascript:window.__pwned=\'image\') <javascript:alert(1)>',
      '**<img src=x onerror="window.__pwned = \'nested\'">** `<script>x</script>`',
    ].join('\n\n')
    await agent.say({ type: 'markdown', markdown: evil })
    await agent.say({ type: 'text', text: '<img src=x onerror="window.__pwned = \'text\'">' })
    await agent.say({ type: 'card', title: '<img src=x onerror="window.__pwned=\'card\'">', imageUrl: 'javascript:window.__pwned=\'cardimg\'', actions: [{ action: 'url', label: 'bad link', value: 'javascript:window.__pwned=\'action\'' }] })
    await agent.say({ type: 'file', fileUrl: 'javascript:window.__pwned=\'file\'', title: 'evil file' })
    await agent.say({ type: 'image', imageUrl: 'data:image/svg+xml,<svg onload="window.__pwned=1">' })
    await agent.say({ type: 'text', text: 'after the payloads' })
    await theirs(page, 'after the payloads').waitFor()
    // Give any injected handler (image error, svg load) a chance to fire, and click what can be clicked.
    await page.getByText('click me').click()
    await page.getByRole('button', { name: 'bad link' }).click({ force: true }).catch(() => undefined)
    await page.waitForTimeout(500)

    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined()
    const dangerous = await page.evaluate(() =>
      document.querySelectorAll('#pw-log script, #pw-log iframe, #pw-log svg [onload], #pw-log svg[onload], #pw-log [onerror], #pw-log [onload], #pw-log [onclick], #pw-log a[href^="javascript:" i], #pw-log img[src^="javascript:" i], #pw-log img[src^="data:" i]').length)
    expect(dangerous).toBe(0)
    expect(await page.$$eval('script', (els) => els.map((e) => e.getAttribute('src')))).toEqual([expect.stringMatching(/^assets\/webchat\.js/)])
    // The markup is shown as text, as written.
    await theirs(page, '<script>window.__pwned').first().waitFor()
    await theirs(page, '<img src=x onerror=').first().waitFor()
  })

  it('fits a phone-sized screen', async () => {
    await context.close()
    context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 })
    page = await context.newPage()
    errors = watchErrors(page)
    await openChat(page, h.credentials.chat.webchatUrl!)
    const agent = await secondParticipant(h.credentials.chat.url, page)
    await agent.say({ type: 'carousel', items: [1, 2, 3].map((n) => ({ type: 'card' as const, title: `Card ${n}`, subtitle: 'A long subtitle that wraps on a small screen', actions: [{ action: 'postback' as const, label: `Pick ${n}`, value: `${n}` }] })) })
    await agent.say({ type: 'text', text: 'averyveryveryverylongwordwithoutanyspacesthatmustwrapinsteadofoverflowingthescreen' })
    await theirs(page, 'averyvery').waitFor()
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360)
    const composer = await page.locator('#pw-composer').boundingBox()
    expect(composer && composer.y + composer.height).toBeLessThanOrEqual(740)
    const send = await page.locator('#pw-send').boundingBox()
    expect(send!.height).toBeGreaterThanOrEqual(44) // touch target
    await page.screenshot({ path: artifactPath('webchat-phone.png') })
  })

  it('embed.js adds a launcher that opens the chat in an iframe on another site', async () => {
    // Another site: a second HTTP server (another port, so another origin) serving a page that embeds the chat.
    const shop = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(`<!doctype html><html><head><title>Shop</title></head><body><h1>A shop</h1>
        <script src="${h.baseUrl}/webchat/embed.js" data-webhook-id="${h.credentials.chat.webhookId}" data-title="Shop help"></script></body></html>`)
    })
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
    onTestFinished(() => new Promise<void>((resolve) => shop.close(() => resolve())))
    const host = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/`
    await page.goto(host)
    const launcher = page.getByRole('button', { name: 'Chat with us' })
    await expect.poll(() => launcher.getAttribute('aria-expanded')).toBe('false')
    await launcher.click()
    await expect.poll(() => launcher.getAttribute('aria-expanded')).toBe('true')
    const frame = page.frameLocator('iframe[title="Shop help"]')
    await frame.locator('#parley-webchat[data-state="ready"]').waitFor({ state: 'attached' })
    await expect.poll(() => frame.locator('#pw-title').textContent()).toBe('Shop help')
    await frame.locator('#pw-input').fill('hi from the shop')
    await frame.locator('#pw-input').press('Enter')
    await frame.locator('#pw-log article.pw-msg-mine', { hasText: 'hi from the shop' }).waitFor()
    // The page's own close button asks the host page to close the panel.
    await frame.getByRole('button', { name: 'Close chat' }).click()
    await expect.poll(() => launcher.getAttribute('aria-expanded')).toBe('false')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Chat with us')
  })
})
