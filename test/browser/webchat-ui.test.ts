/**
 * The webchat's interactive parts in Chromium, each at 1024 px and at 375 px (a phone, with touch): answered
 * choices, the carousel, history, the image lightbox, a new conversation and the emoji picker. Every test ends with
 * a screenshot in test-artifacts/ and an axe-core check (no serious or critical violation).
 */
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { ChatApi } from '../../src/webchat/shared/chat-api.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, secondParticipant, session, startMediaServer, watchErrors } from './browser.js'

const WIDTHS = [1024, 375] as const
/** expect.poll with room for a loaded machine (its default gives up after 1 s). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000 })

const mine = (page: Page, text: string) => page.locator('#pw-log article.pw-msg-mine', { hasText: text })
const bubbles = (page: Page, side: 'mine' | 'theirs') => page.$$eval(`#pw-log article.pw-msg-${side} .pw-bubble`, (els) => els.map((e) => e.textContent ?? ''))

describeBrowser('webchat interactive parts in Chromium', () => {
  let h: Harness
  let demo: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[h, demo, browser] = await Promise.all([startParley({ listen: true }), startParley({ listen: true, demoBot: true }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await Promise.all([h?.close(), demo?.close()])
  })

  /** A page at `width` px (375: a phone with touch); at the end of the test: no page error, no serious axe violation. */
  async function open(width: number): Promise<{ page: Page; context: BrowserContext }> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, ...(width < 500 && { isMobile: true, hasTouch: true }) })
    const page = await context.newPage()
    const errors = watchErrors(page)
    onTestFinished(async () => {
      await context.close()
    })
    onTestFinished(() => {
      expect(errors).toEqual([])
    })
    return { page, context }
  }

  async function accessible(page: Page): Promise<void> {
    expect(await seriousViolations(page)).toEqual([])
  }

  for (const width of WIDTHS) {
    it(`answered choices at ${width} px: disabled once answered, the label in the user's bubble, the value sent`, async () => {
      const { page } = await open(width)
      await openChat(page, h.credentials.chat.webchatUrl!)
      const me = await session(page)
      const agent = await secondParticipant(h.credentials.chat.url, page)
      await agent.say({ type: 'choice', text: 'Pick a colour', options: [{ label: 'Red', value: 'red-value' }, { label: 'Blue', value: 'blue-value' }] })
      const red = page.getByRole('button', { name: 'Red' })
      await red.click()
      await mine(page, 'Red').waitFor()
      // The bubble shows the label; the message keeps the value (what the bot reads), as Botpress's webchat sends it.
      expect(await bubbles(page, 'mine')).toEqual(['Red'])
      const sent = (await agent.api.listMessages(me.conversationId)).messages.find((m) => m.userId === me.userId)!
      expect(sent.payload).toEqual({ type: 'text', text: 'red-value' })
      // Answered: every option is disabled, the one picked says so to screen readers; the focus is in the composer.
      await poll(() => red.isDisabled()).toBe(true)
      expect(await page.getByRole('button', { name: 'Blue' }).isDisabled()).toBe(true)
      expect(await page.getByRole('button', { name: 'Red (your answer)' }).count()).toBe(1)
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('pw-input')

      // A dropdown, by keyboard: choose, then Send.
      await agent.say({ type: 'dropdown', text: 'Pick a country', options: [{ label: 'Canada', value: 'CA' }, { label: 'Japan', value: 'JP' }] })
      const select = page.getByLabel('Pick a country')
      await select.selectOption({ label: 'Japan' })
      await page.locator('.pw-dropdown button', { hasText: 'Send' }).focus()
      await page.keyboard.press('Enter')
      await mine(page, 'Japan').waitFor()
      await poll(() => select.isDisabled()).toBe(true)

      // Answered elsewhere (another client of the same user, no webchat metadata): the typed value counts.
      await agent.say({ type: 'choice', text: 'Size?', options: [{ label: 'Small', value: 's' }, { label: 'Large', value: 'l' }] })
      await page.getByRole('button', { name: 'Large' }).waitFor()
      await new ChatApi(h.credentials.chat.url, me.userKey).createMessage(me.conversationId, { type: 'text', text: 'l' })
      await poll(() => page.getByRole('button', { name: 'Large (your answer)' }).isDisabled()).toBe(true)
      await poll(() => bubbles(page, 'mine')).toEqual(['Red', 'Japan', 'Large'])

      // A reload shows the same: answers from the server's history.
      await page.reload()
      await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
      await poll(() => bubbles(page, 'mine')).toEqual(['Red', 'Japan', 'Large'])
      expect(await page.getByRole('button', { name: 'Red (your answer)' }).isDisabled()).toBe(true)
      expect(await page.getByLabel('Pick a country').isDisabled()).toBe(true)
      expect(await page.getByLabel('Pick a country').inputValue()).toBe('1')

      // An unanswered choice stays usable.
      await agent.say({ type: 'choice', text: 'Still open?', options: [{ label: 'Yes', value: 'yes' }] })
      expect(await page.getByRole('button', { name: 'Yes' }).isEnabled()).toBe(true)
      await page.screenshot({ path: artifactPath(`webchat-answers-${width}.png`) })
      await accessible(page)
      // Dark mode too (the chosen option's colours are the page's accent).
      await page.emulateMedia({ colorScheme: 'dark' })
      await accessible(page)
    })
  }

  for (const width of WIDTHS) {
    it(`carousel at ${width} px: labelled arrows (mouse and keyboard), swipe, scroll-snap; every card reachable whole`, async () => {
      const { page, context } = await open(width)
      await openChat(page, h.credentials.chat.webchatUrl!)
      const agent = await secondParticipant(h.credentials.chat.url, page)
      const cards = [1, 2, 3, 4].map((n) => ({ type: 'card' as const, title: `Card ${n}`, subtitle: 'A subtitle long enough to wrap on a phone', actions: [{ action: 'postback' as const, label: `Pick ${n}`, value: `pick-${n}` }] }))
      await agent.say({ type: 'carousel', items: cards })
      const carousel = page.getByRole('group', { name: '4 cards' })
      await carousel.waitFor()
      expect(await carousel.getAttribute('aria-roledescription')).toBe('carousel')
      const prev = page.getByRole('button', { name: 'Previous card' })
      const next = page.getByRole('button', { name: 'Next card' })
      await next.waitFor()
      const track = page.locator('.pw-carousel')
      /** Whether card n is wholly inside the visible part of the row. */
      const whole = async (n: number) => {
        const [row, card] = await Promise.all([track.boundingBox(), page.locator('.pw-carousel .pw-card', { hasText: `Card ${n}` }).boundingBox()])
        return card!.x >= row!.x - 1 && card!.x + card!.width <= row!.x + row!.width + 1
      }
      const position = () => page.locator('.pw-carousel-position').textContent()
      expect(await prev.getAttribute('aria-disabled')).toBe('true')
      expect(await whole(1)).toBe(true)
      expect(await whole(4)).toBe(false)
      // The page itself never scrolls sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)

      // Next, with the mouse: the second card comes wholly into view.
      await next.click()
      await poll(() => whole(2)).toBe(true)
      expect(await prev.getAttribute('aria-disabled')).toBe('false')
      // Keyboard: Enter on the focused arrow moves on, and the focus stays on it.
      await next.focus()
      for (let i = 0; i < 3; i++) await page.keyboard.press('Enter')
      await poll(() => whole(4)).toBe(true)
      expect(await next.getAttribute('aria-disabled')).toBe('true')
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Next card')
      await poll(position).toMatch(/4 of 4$/)
      await page.getByRole('button', { name: 'Pick 4' }).click()
      await mine(page, 'Pick 4').waitFor()
      // Back to the start (Playwright treats aria-disabled as disabled: click while it is not).
      for (let i = 0; i < 4 && (await prev.getAttribute('aria-disabled')) !== 'true'; i++) {
        await prev.click()
        await page.waitForTimeout(50) // the position is updated on the next animation frame
      }
      await poll(() => whole(1)).toBe(true)
      expect(await prev.getAttribute('aria-disabled')).toBe('true')

      // The row itself takes the arrow keys (it is in the tab order) and snaps card by card.
      await track.focus()
      await page.keyboard.press('ArrowRight')
      await poll(() => track.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0)
      await poll(async () => (await Promise.all([1, 2, 3, 4].map(whole))).some(Boolean)).toBe(true)
      await track.evaluate((el) => el.scrollTo({ left: 0 }))

      if (width < 500) {
        // A swipe to the left (touch events through the DevTools protocol, as a finger would send them) lands on
        // the second card: scroll-snap aligns it, whole.
        const box = (await track.boundingBox())!
        const cdp = await context.newCDPSession(page)
        const y = Math.round(box.y + 40)
        const x = Math.round(box.x + box.width * 0.8)
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] })
        for (let i = 1; i <= 8; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x - i * 20, y }] })
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] })
        await poll(() => whole(2)).toBe(true)
        // Snapped: the second card's left edge on the row's left edge.
        await poll(() => track.evaluate((el) => Math.round((el.children[1] as HTMLElement).offsetLeft - el.scrollLeft))).toBe(0)
        await poll(position).toBe('2 of 4')
        await poll(() => whole(1)).toBe(false)
      }
      await page.screenshot({ path: artifactPath(`webchat-carousel-${width}.png`) })
      await accessible(page)
      await page.emulateMedia({ colorScheme: 'dark' })
      await accessible(page)
    })
  }

  for (const width of WIDTHS) {
    it(`history at ${width} px: back through the whole conversation a page at a time, the reader's place kept`, async () => {
      const { page: first, context } = await open(width)
      await openChat(first, h.credentials.chat.webchatUrl!)
      const me = await session(first)
      const agent = await secondParticipant(h.credentials.chat.url, first)
      await first.close()
      // 250 messages (more than the 200 the page used to read), one at a time so their order is known.
      const mineApi = new ChatApi(h.credentials.chat.url, me.userKey)
      const TOTAL = 250
      for (let i = 1; i <= TOTAL; i++) {
        const payload = { type: 'text' as const, text: `message ${i}` }
        if (i % 5 === 0) await mineApi.createMessage(me.conversationId, payload)
        else await agent.say(payload)
      }

      const page = await context.newPage()
      const errors = watchErrors(page)
      onTestFinished(() => {
        expect(errors).toEqual([])
      })
      await openChat(page, h.credentials.chat.webchatUrl!)
      const articles = page.locator('#pw-log article')
      await page.locator('#pw-log article', { hasText: `message ${TOTAL}` }).waitFor()
      const shown = () => articles.count()
      expect(await shown()).toBeLessThan(TOTAL)
      const history = page.locator('.pw-history')
      expect(await history.getAttribute('data-state')).toBe('more')

      // Scrolling to the top loads the page before, and the message that was first stays where it was on screen.
      const before = await shown()
      const firstId = (await articles.first().getAttribute('data-message-id'))!
      const y0 = await page.evaluate(() => {
        const log = document.getElementById('pw-log')!
        log.scrollTop = 0
        return log.querySelector('article')!.getBoundingClientRect().top
      })
      await poll(shown).toBeGreaterThan(before)
      await poll(() => history.getAttribute('data-state')).not.toBe('loading')
      const y1 = await page.locator(`#pw-log article[data-message-id="${firstId}"]`).evaluate((el) => el.getBoundingClientRect().top)
      expect(Math.abs(y1 - y0)).toBeLessThanOrEqual(2)

      // The rest with the keyboard: the button at the top of the log, Enter, until the beginning.
      const button = page.getByRole('button', { name: 'Load older messages' })
      for (let i = 0; i < 20 && (await history.getAttribute('data-state')) !== 'done'; i++) {
        const count = await shown()
        await button.focus()
        await page.keyboard.press('Enter')
        await poll(async () => (await shown()) > count || (await history.getAttribute('data-state')) === 'done').toBe(true)
        await poll(() => history.getAttribute('data-state')).not.toBe('loading')
      }
      expect(await history.getAttribute('data-state')).toBe('done')
      await page.locator('.pw-history-end', { hasText: 'Beginning of the conversation' }).waitFor()
      // Every message once, in order.
      const texts = await page.$$eval('#pw-log article .pw-bubble', (els) => els.map((e) => e.textContent))
      expect(texts).toEqual(Array.from({ length: TOTAL }, (_, i) => `message ${i + 1}`))
      const ids = await page.$$eval('#pw-log article', (els) => els.map((e) => e.getAttribute('data-message-id')))
      expect(new Set(ids).size).toBe(TOTAL)
      await poll(() => page.locator('#pw-announce').textContent()).toMatch(/beginning of the conversation/)
      // Live messages still arrive at the bottom.
      await agent.say({ type: 'text', text: 'a new one' })
      await page.locator('#pw-log article', { hasText: 'a new one' }).waitFor()
      expect((await page.$$eval('#pw-log article .pw-bubble', (els) => els.map((e) => e.textContent))).at(-1)).toBe('a new one')
      await page.evaluate(() => {
        document.getElementById('pw-log')!.scrollTop = 0
      })
      await page.screenshot({ path: artifactPath(`webchat-history-${width}.png`) })
      await accessible(page)
    })
  }

  for (const width of WIDTHS) {
    it(`image lightbox at ${width} px: opens large in a labelled dialog, Escape closes, the focus comes back`, async () => {
      const { page } = await open(width)
      const media = await startMediaServer()
      onTestFinished(() => media.close())
      await openChat(page, h.credentials.chat.webchatUrl!)
      const agent = await secondParticipant(h.credentials.chat.url, page)
      await agent.say({ type: 'image', imageUrl: `${media.url}/photo.svg` })
      await agent.say({ type: 'markdown', markdown: `A map: ![Mountain map](${media.url}/map.svg) and a linked one [![Logo](${media.url}/logo.svg)](https://example.com)` })
      const thumb = page.getByRole('button', { name: 'Image (enlarge)' })
      await thumb.waitFor()
      await page.waitForFunction(() => Array.from(document.querySelectorAll('#pw-log img')).every((i) => (i as HTMLImageElement).complete))
      const small = (await thumb.boundingBox())!

      // Mouse: the picture opens in a modal dialog named after it, larger than in the message.
      await thumb.click()
      const dialog = page.getByRole('dialog', { name: 'Image' })
      await dialog.waitFor()
      const big = (await dialog.locator('img').boundingBox())!
      expect(big.width).toBeGreaterThan(small.width)
      expect(big.width).toBeGreaterThanOrEqual(Math.min(width, 800) * 0.8)
      expect(await dialog.locator('img').getAttribute('src')).toBe(`${media.url}/photo.svg`)
      expect(await dialog.getByRole('link', { name: /Open original/ }).getAttribute('target')).toBe('_blank')
      // The focus is in the dialog; the page behind is inert.
      expect(await page.evaluate(() => document.activeElement?.closest('dialog') !== null)).toBe(true)
      await page.screenshot({ path: artifactPath(`webchat-lightbox-${width}.png`) })
      await accessible(page)
      await page.keyboard.press('Escape')
      await poll(() => dialog.isVisible()).toBe(false)
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Image (enlarge)')

      // Keyboard: Enter on the picture opens it, the Close button closes it, the focus is back on the picture.
      await page.keyboard.press('Enter')
      await dialog.waitFor()
      await page.getByRole('button', { name: 'Close image' }).focus()
      await page.keyboard.press('Enter')
      await poll(() => dialog.isVisible()).toBe(false)
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Image (enlarge)')

      // A markdown image opens the same way; a click on the dark area closes. An image inside a link stays a link.
      await page.getByRole('button', { name: 'Mountain map (enlarge)' }).click()
      const map = page.getByRole('dialog', { name: 'Mountain map' })
      await map.waitFor()
      await page.mouse.click(5, Math.round((await page.viewportSize())!.height - 5))
      await poll(() => map.isVisible()).toBe(false)
      expect(await page.getByRole('button', { name: 'Logo (enlarge)' }).count()).toBe(0)
      expect(await page.getByRole('link', { name: 'Logo' }).getAttribute('href')).toBe('https://example.com/')
      await accessible(page)
    })
  }

  for (const width of WIDTHS) {
    it(`new conversation at ${width} px: "New chat" leaves the old one, the bot greets again, a reload stays in the new one`, async () => {
      const { page } = await open(width)
      const before = await openChat(page, demo.credentials.chat.webchatUrl!)
      const greeting = page.locator('#pw-log article.pw-msg-theirs', { hasText: 'I am the Parley demo bot' })
      await greeting.waitFor()
      await page.fill('#pw-input', 'hello')
      await page.press('#pw-input', 'Enter')
      await mine(page, 'hello').waitFor()

      // Keyboard: the header's button, Enter.
      const button = page.getByRole('button', { name: 'New chat' })
      await button.focus()
      await page.keyboard.press('Enter')
      await poll(async () => (await session(page)).conversationId).not.toBe(before.conversationId)
      const after = await session(page)
      expect(after.userId).toBe(before.userId) // the same user, a new conversation
      await poll(() => page.locator('#parley-webchat').getAttribute('data-conversation-id')).toBe(after.conversationId)
      // The old conversation's messages are gone from the log; the bot's greeting of the new one is there, once.
      await greeting.waitFor()
      expect(await mine(page, 'hello').count()).toBe(0)
      await poll(() => page.locator('#pw-status').textContent()).toBe('Online')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('pw-input')
      await poll(() => page.locator('#pw-announce').textContent()).toBe('New conversation started.')
      await page.fill('#pw-input', 'help')
      await page.press('#pw-input', 'Enter')
      await page.getByRole('button', { name: 'Show text' }).waitFor()
      expect(await greeting.count()).toBe(1)
      // The old conversation is still there on the server.
      const old = new ChatApi(demo.credentials.chat.url, before.userKey)
      expect((await old.listMessages(before.conversationId)).messages.some((m) => (m.payload as { text?: string }).text === 'hello')).toBe(true)

      await page.reload()
      await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
      expect((await session(page)).conversationId).toBe(after.conversationId)
      await mine(page, 'help').waitFor()
      expect(await mine(page, 'hello').count()).toBe(0)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
      await page.screenshot({ path: artifactPath(`webchat-new-conversation-${width}.png`) })
      await accessible(page)
    })
  }

  for (const width of WIDTHS) {
    it(`emoji at ${width} px: a keyboard-friendly picker inserts at the caret`, async () => {
      const { page } = await open(width)
      await openChat(page, h.credentials.chat.webchatUrl!)
      const toggle = page.getByRole('button', { name: 'Insert emoji' })
      await page.fill('#pw-input', 'I like it')
      await page.locator('#pw-input').evaluate((el) => (el as HTMLTextAreaElement).setSelectionRange(2, 2))
      await toggle.click()
      expect(await toggle.getAttribute('aria-expanded')).toBe('true')
      const panel = page.getByRole('group', { name: 'Emoji' })
      await panel.waitFor()
      // The focus is on the first emoji; the arrows move it; Enter inserts it where the caret was.
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('grinning face')
      await page.keyboard.press('ArrowRight')
      await page.keyboard.press('ArrowRight')
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('smiling face')
      await page.keyboard.press('ArrowDown')
      const below = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))
      expect(below).toBe(width < 500 ? 'crying face' : 'angry face') // 6 columns on a phone, 8 on a wide screen
      await page.keyboard.press('ArrowUp')
      await page.screenshot({ path: artifactPath(`webchat-emoji-${width}.png`) })
      await accessible(page)
      await page.keyboard.press('Enter')
      expect(await page.inputValue('#pw-input')).toBe('I 😊like it')
      expect(await panel.isVisible()).toBe(false)
      expect(await toggle.getAttribute('aria-expanded')).toBe('false')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('pw-input')

      // Escape closes and gives the focus back to the button; a click elsewhere closes too.
      await toggle.focus()
      await page.keyboard.press('Enter')
      await panel.waitFor()
      await page.keyboard.press('Escape')
      expect(await panel.isVisible()).toBe(false)
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Insert emoji')
      await toggle.click()
      await panel.waitFor()
      await page.locator('#pw-log').click({ position: { x: 5, y: 5 } })
      await poll(() => panel.isVisible()).toBe(false)

      await page.locator('#pw-input').press('End')
      await page.getByRole('button', { name: 'Insert emoji' }).click()
      await page.getByRole('button', { name: 'party popper' }).click()
      await page.press('#pw-input', 'Enter')
      await mine(page, 'I 😊like it🎉').waitFor()
    })
  }
})
