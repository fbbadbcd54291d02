/**
 * The demo bot's video in Chromium: "show video" answers a video message whose file Parley serves itself
 * (assets/demo/sample.webm, made by scripts/make-demo-video.mjs); the page's <video> loads it (metadata, a
 * finite duration), seeks into it (byte ranges) and plays, with no media error, at 1024 and 375 px, with a
 * screenshot and an axe-core check.
 */
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, typeAndSend, watchErrors } from './browser.js'

describeBrowser('the demo video in Chromium', () => {
  let h: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true, demoBot: true }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  for (const width of [1024, 375]) {
    it(`"show video" plays the shipped WebM at ${width} px: metadata, duration, seek, no error`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 }, ...(width < 500 && { isMobile: true, hasTouch: true }) })
      onTestFinished(() => context.close())
      const page = await context.newPage()
      const errors = watchErrors(page)
      const media: { url: string; status: number; range?: string }[] = []
      page.on('response', (res) => {
        if (res.url().includes('/demo/assets/sample.webm')) media.push({ url: res.url(), status: res.status(), ...(res.request().headers().range && { range: res.request().headers().range }) })
      })
      await openChat(page, h.credentials.chat.webchatUrl!)
      await typeAndSend(page, 'show video')
      const video = page.locator('#pw-log article.pw-msg-theirs video')
      await video.waitFor()
      expect(await video.getAttribute('src')).toBe(`${h.baseUrl}/demo/assets/sample.webm`)
      // HAVE_METADATA or more, and no MediaError.
      await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.readyState), { timeout: 15_000 }).toBeGreaterThanOrEqual(1)
      expect(await video.evaluate((v: HTMLVideoElement) => v.error?.code ?? null)).toBeNull()
      const info = await video.evaluate((v: HTMLVideoElement) => ({ duration: v.duration, width: v.videoWidth, height: v.videoHeight }))
      expect(info.width).toBe(480)
      expect(info.height).toBe(270)
      expect(Number.isFinite(info.duration)).toBe(true)
      expect(info.duration).toBeGreaterThan(3)
      expect(info.duration).toBeLessThan(5)
      // Seek to the middle and play a little: frames decode, time moves.
      const seeked = await video.evaluate((v: HTMLVideoElement) => new Promise<number>((resolve, reject) => {
        v.addEventListener('seeked', () => resolve(v.currentTime), { once: true })
        v.addEventListener('error', () => reject(new Error(`media error ${v.error?.code}`)), { once: true })
        v.currentTime = 2
      }))
      expect(seeked).toBeGreaterThan(1.5)
      await video.evaluate(async (v: HTMLVideoElement) => {
        v.muted = true
        await v.play()
      })
      await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime), { timeout: 10_000 }).toBeGreaterThan(seeked + 0.2)
      await video.evaluate((v: HTMLVideoElement) => v.pause())
      expect(await video.evaluate((v: HTMLVideoElement) => v.error?.code ?? null)).toBeNull()
      expect(media.length).toBeGreaterThan(0)
      expect(media.every((m) => m.status === 200 || m.status === 206)).toBe(true)
      // Chromium asks for byte ranges and gets them.
      expect(media.some((m) => m.range !== undefined && m.status === 206), JSON.stringify(media)).toBe(true)
      await video.scrollIntoViewIfNeeded()
      await page.screenshot({ path: artifactPath(`webchat-demo-video-${width}.png`) })
      expect(await seriousViolations(page)).toEqual([])
      expect(errors).toEqual([])
    })
  }
})
