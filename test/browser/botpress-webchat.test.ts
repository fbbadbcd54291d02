/**
 * Botpress's own React webchat, `@botpress/webchat` 4.5.2 unchanged (npm workspace test/webchat-env), on a page of
 * another origin, against Parley's webchat API: `<Webchat clientId={chat webhook id} apiUrl={`${baseUrl}/webchat-api`}>`.
 * The page's bundle is built here with esbuild from test/webchat-env/page.jsx; a second tiny HTTP server (another port,
 * so another origin) serves it with the package's dist/style.css. With the demo bot, in Chromium: the greeting, `help`'s
 * menu, a choice button that shows an image, a file sent through the upload button, a thumbs up recorded by Parley, and
 * the conversation shown again after a reload. Screenshots at each step; no page error.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { artifactPath, describeBrowser, launchBrowser, watchErrors } from './browser.js'

const ENV_DIR = join(process.cwd(), 'test', 'webchat-env')
const WAIT = { timeout: 15_000 }
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

/** The page's script: page.jsx with React and the webchat, for the browser. The CSS the package imports is served apart. */
async function bundlePage(): Promise<{ js: string; css: string }> {
  const result = await build({
    entryPoints: [join(ENV_DIR, 'page.jsx')],
    absWorkingDir: ENV_DIR,
    // The workspace's own node_modules when npm kept a copy there, else the root's (hoisted).
    nodePaths: [join(ENV_DIR, 'node_modules'), join(process.cwd(), 'node_modules')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    jsx: 'automatic',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.css': 'empty' },
    logLevel: 'silent',
  })
  const js = result.outputFiles[0]!.text
  // `exports` of @botpress/webchat has no ./package.json nor ./dist/*: its entry for require is dist/index.umd.cjs.
  const req = createRequire(join(ENV_DIR, 'package.json'))
  const css = readFileSync(join(dirname(req.resolve('@botpress/webchat')), 'style.css'), 'utf8')
  return { js, css }
}

describeBrowser("Botpress's webchat (@botpress/webchat 4.5.2) on Parley's webchat API", () => {
  let h: Harness
  let browser: Browser
  let site: Server
  let siteUrl: string
  let apiUrl: string
  let clientId: string

  beforeAll(async () => {
    let bundle: { js: string; css: string }
    ;[h, browser, bundle] = await Promise.all([startParley({ listen: true, demoBot: true }), launchBrowser(), bundlePage()])
    clientId = h.credentials.chat.webhookId
    // The chat accepts files only of the types its webchat settings name.
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    await admin.updateBot({ id: h.credentials.botId, integrations: { chat: { configuration: { webchat: { uploadTypes: 'image/*', uploadMaxBytes: 100_000 } } } } })
    apiUrl = `${h.baseUrl}/webchat-api`
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A shop with Botpress's webchat</title><link rel="stylesheet" href="/style.css">
<style>html, body { height: 100%; margin: 0 } #root { position: fixed; inset: 0 }</style>
<script>window.PARLEY = ${JSON.stringify({ clientId, apiUrl })}</script>
</head><body><div id="root"></div><script type="module" src="/page.js"></script></body></html>`
    const files: Record<string, [string, string]> = {
      '/': ['text/html; charset=utf-8', html],
      '/page.js': ['text/javascript; charset=utf-8', bundle.js],
      '/style.css': ['text/css; charset=utf-8', bundle.css],
    }
    site = createServer((req, res) => {
      const file = files[req.url ?? '']
      if (!file) return void res.writeHead(404).end()
      res.writeHead(200, { 'content-type': file[0] })
      res.end(file[1])
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
    expect(new URL(siteUrl).origin).not.toBe(new URL(h.baseUrl).origin)
  })
  afterAll(async () => {
    await browser?.close()
    await new Promise<void>((resolve) => {
      if (!site) return resolve()
      site.close(() => resolve())
      site.closeAllConnections()
    })
    await h?.close()
  })

  /**
   * Every call the page makes to Parley, with its status, in test-artifacts/ (read it when a step fails); the ones
   * Parley refused (4xx, 5xx) are also returned, for the test to assert there were none.
   */
  function recordNetwork(page: Page): { log: string; refused: string[] } {
    const log = artifactPath('botpress-webchat-network.log')
    const refused: string[] = []
    writeFileSync(log, '')
    const line = (s: string) => appendFileSync(log, `${new Date().toISOString()} ${s}\n`)
    page.on('response', async (res) => {
      const req = res.request()
      if (new URL(req.url()).origin !== new URL(h.baseUrl).origin) return
      // JSON bodies only (not the upload's bytes, nor the SSE stream, which stays open).
      const sent = (req.headers()['content-type'] ?? '').includes('json') ? req.postData()?.slice(0, 400) ?? '' : ''
      const body = (res.headers()['content-type'] ?? '').includes('json') ? (await res.text().catch(() => '')).slice(0, 600) : ''
      line(`${req.method()} ${req.url()} ${sent} → ${res.status()} ${body}`)
      if (res.status() >= 400) refused.push(`${req.method()} ${req.url()} → ${res.status()} ${body}`)
    })
    page.on('requestfailed', (req) => line(`FAILED ${req.method()} ${req.url()}: ${req.failure()?.errorText}`))
    page.on('console', (msg) => { if (msg.type() === 'error' || msg.type() === 'warning') line(`console.${msg.type()}: ${msg.text().slice(0, 600)}`) })
    return { log, refused }
  }

  /** The conversation and user the webchat keeps in localStorage (`bp-webchat-{clientId}-client`, a zustand store). */
  async function stored(page: Page): Promise<{ conversationId?: string; user?: { userId: string; userToken: string } }> {
    const raw = await page.evaluate((key) => localStorage.getItem(key), `bp-webchat-${clientId}-client`)
    return raw ? (JSON.parse(raw) as { state: { conversationId?: string; user?: { userId: string; userToken: string } } }).state : {}
  }

  /** The conversation's messages as the bot sees them, through the Runtime API (feedback is the message's `feedback` tag). */
  async function runtimeMessages(conversationId: string): Promise<{ id: string; type: string; payload: Record<string, unknown>; direction: string; tags: Record<string, string> }[]> {
    const res = await h.app.inject({
      method: 'GET',
      url: `/v1/chat/messages?conversationId=${conversationId}`,
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': h.credentials.botId },
    })
    expect(res.statusCode, res.body).toBe(200)
    return (res.json() as { messages: never[] }).messages
  }

  const incoming = (page: Page, text: string) => page.locator('.bpMessageBlocksBubble[data-direction="incoming"]', { hasText: text })
  const outgoing = (page: Page, text: string) => page.locator('.bpMessageBlocksBubble[data-direction="outgoing"]', { hasText: text })

  /** With CSS animations finished (messages fade in). */
  const shot = (page: Page, name: string) => page.screenshot({ path: artifactPath(name), animations: 'disabled' })

  async function send(page: Page, text: string): Promise<void> {
    const input = page.locator('textarea.bpComposerInput')
    await input.fill(text)
    await input.press('Enter')
  }

  it('greets, answers help with a menu whose button shows an image, sends an uploaded file, records a thumbs up, and keeps it all after a reload', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } })
    onTestFinished(() => context.close())
    // No network here: the theme's Google Fonts stylesheet would only fail slowly.
    await context.route(/^https:\/\/fonts\.(googleapis|gstatic)\.com\//, (route) => route.abort())
    const page = await context.newPage()
    const errors = watchErrors(page)
    const { log, refused } = recordNetwork(page)
    const initialize = page.waitForRequest((req) => req.url().startsWith(`${apiUrl}/${clientId}/initialize`), WAIT)
    await page.goto(siteUrl)
    await page.locator('.bpContainer').waitFor(WAIT)
    const init = await initialize
    expect(init.headers()['accept'], log).toContain('text/event-stream')

    // The greeting of the demo bot's welcome workflow (conversation_started).
    const greeting = incoming(page, 'Hi! I am the Parley demo bot')
    await greeting.waitFor(WAIT)
    await shot(page, 'botpress-webchat-greeting.png')
    const { conversationId, user } = await stored(page)
    expect(conversationId, log).toBeTruthy()
    expect(user?.userId, log).toBeTruthy()

    // help: the choice menu, as text and one button per option.
    await send(page, 'help')
    await outgoing(page, 'help').waitFor(WAIT)
    await incoming(page, 'I can show every message type').waitFor(WAIT)
    const showImage = page.locator('.bpMessageBlocksButton', { hasText: 'Show image' })
    await showImage.waitFor(WAIT)
    expect(await page.locator('.bpMessageBlocksButton', { hasText: 'Sign up' }).count()).toBe(1)
    await shot(page, 'botpress-webchat-menu.png')

    // The button sends its option; the bot answers with the demo image, which loads (Parley serves it cross-origin).
    await showImage.click()
    const image = page.locator(`img.bpMessageBlocksImageImage[src="${h.baseUrl}/demo/assets/parley.svg"]`).first()
    await image.waitFor(WAIT)
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), WAIT).toBe(true)
    await shot(page, 'botpress-webchat-image.png')

    // A bloc (text, image, markdown in one message): its items in the webchat's shape, each shown.
    await send(page, 'show bloc')
    await incoming(page, 'A bloc groups items:').waitFor(WAIT)
    await incoming(page, 'and markdown').waitFor(WAIT)

    // Thumbs up on the greeting (a bot text message): Parley records it on the message.
    await greeting.hover()
    const up = greeting.locator('.bpMessageBlocksBubbleFeedbackIcon').first()
    await up.click()
    await expect.poll(() => up.getAttribute('data-selected'), WAIT).toBe('true')
    const greetingId = (await runtimeMessages(conversationId!)).find((m) => m.direction === 'outgoing' && String(m.payload.text ?? '').startsWith('Hi! I am the Parley demo bot'))?.id
    expect(greetingId, log).toBeTruthy()
    await expect.poll(async () => (await runtimeMessages(conversationId!)).find((m) => m.id === greetingId)?.tags.feedback, WAIT).toBe('positive')
    await shot(page, 'botpress-webchat-feedback.png')

    // A PNG through the upload button (its hidden file input): uploaded to Parley, then sent as an image message.
    await page.locator('.bpComposerInputContainer input[type="file"]').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: PNG })
    await page.locator('.bpComposerFileContainer').waitFor(WAIT)
    const sendButton = page.locator('.bpComposerSendButton[data-show="true"]')
    await sendButton.waitFor(WAIT)
    // The file's status is "uploaded" once Parley has the bytes: its loader is gone.
    await page.locator('.bpComposerFileLoader').waitFor({ state: 'detached', ...WAIT })
    await shot(page, 'botpress-webchat-upload.png')
    await sendButton.click()
    const sent = page.locator('.bpMessageContainer[data-direction="outgoing"] img.bpMessageBlocksImageImage').last()
    await sent.waitFor(WAIT)
    const sentUrl = (await sent.getAttribute('src'))!
    await expect.poll(() => sent.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), WAIT).toBe(true)
    await expect.poll(async () => (await runtimeMessages(conversationId!)).find((m) => m.type === 'image' && m.direction === 'incoming')?.payload.imageUrl, WAIT).toBe(sentUrl)
    const fetched = await fetch(sentUrl)
    expect(fetched.status).toBe(200)
    expect(Buffer.from(await fetched.arrayBuffer()).equals(PNG)).toBe(true)
    await shot(page, 'botpress-webchat-file-sent.png')

    // A reload: the same user and conversation (localStorage), the earlier messages shown again, the thumbs up too.
    await page.reload()
    await greeting.waitFor(WAIT)
    await outgoing(page, 'help').waitFor(WAIT)
    await image.waitFor(WAIT)
    await page.locator(`img[src="${sentUrl}"]`).waitFor(WAIT)
    expect(await stored(page)).toEqual({ conversationId, user })
    await expect.poll(() => greeting.locator('.bpMessageBlocksBubbleFeedbackIcon').first().getAttribute('data-selected'), WAIT).toBe('true')
    // Still talking to the same conversation.
    await send(page, 'still here')
    await incoming(page, 'You said: still here').waitFor(WAIT)
    await incoming(page, 'You said: still here').scrollIntoViewIfNeeded()
    await shot(page, 'botpress-webchat-reloaded.png')
    expect(errors).toEqual([])
    expect(refused).toEqual([])
  })
})
