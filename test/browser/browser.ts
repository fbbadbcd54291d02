import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'vitest'
import { chromium, type Browser, type Frame, type Page } from 'playwright-core'
import { ChatApi } from '../../src/webchat/shared/chat-api.js'
import type { MessagePayload } from '../../src/webchat/shared/types.js'

/**
 * Browser tests run Debian's Chromium (`apt-get install -y chromium`) through playwright-core; they never
 * download a browser. Without /usr/bin/chromium they are skipped with a message, unless PARLEY_REQUIRE_BROWSER=1
 * (CI), where a missing browser fails the run.
 */
export const CHROMIUM = process.env.PARLEY_CHROMIUM || '/usr/bin/chromium'
export const hasBrowser = existsSync(CHROMIUM)
const required = process.env.PARLEY_REQUIRE_BROWSER === '1'

export function describeBrowser(name: string, suite: () => void): void {
  if (hasBrowser) {
    describe(name, suite)
    return
  }
  if (required) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(`PARLEY_REQUIRE_BROWSER=1 but there is no browser at ${CHROMIUM}: run \`apt-get install -y chromium\` (or set PARLEY_CHROMIUM)`)
      })
    })
    return
  }
  console.warn(`[parley] skipping browser tests "${name}": no Chromium at ${CHROMIUM}. Install it with \`apt-get install -y chromium\`; set PARLEY_REQUIRE_BROWSER=1 to make this an error.`)
  describe.skip(`${name} (skipped: no Chromium at ${CHROMIUM})`, suite)
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

export const ARTIFACTS = join(process.cwd(), 'test-artifacts')

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true })
  return join(ARTIFACTS, name)
}

/** Collects uncaught page errors: a test ends by asserting there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(String(err)))
  return errors
}

export async function openChat(page: Page, webchatUrl: string): Promise<{ userKey: string; userId: string; conversationId: string }> {
  await page.goto(webchatUrl)
  await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
  return session(page)
}

/** What the page (or the webchat's iframe in a host page) keeps in localStorage: its user key, user id and conversation. */
export async function session(page: Page | Frame): Promise<{ userKey: string; userId: string; conversationId: string }> {
  const raw = await page.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith('parley.webchat.'))
    return key ? localStorage.getItem(key) : null
  })
  if (!raw) throw new Error('the webchat stored no session in localStorage')
  return JSON.parse(raw) as { userKey: string; userId: string; conversationId: string }
}

/**
 * A second participant in the page's conversation, created through the Chat API: it stands in for a bot
 * (or a human agent) so tests control exactly what the page receives.
 */
export async function secondParticipant(chatUrl: string, page: Page | Frame): Promise<{ say(payload: MessagePayload): Promise<string>; api: ChatApi; userId: string }> {
  const mine = await session(page)
  const owner = new ChatApi(chatUrl, mine.userKey)
  const other = new ChatApi(chatUrl)
  const { user, key } = await other.createUser({ name: 'Agent' })
  other.key = key
  await owner.addParticipant(mine.conversationId, user.id)
  return {
    api: other,
    userId: user.id,
    async say(payload) {
      const { message } = await other.createMessage(mine.conversationId, payload)
      return message.id
    },
  }
}

export async function typeAndSend(page: Page, text: string): Promise<void> {
  await page.fill('#pw-input', text)
  await page.press('#pw-input', 'Enter')
}

/** A stand-in for the web: serves a picture (SVG) so image payloads have something to show. */
export async function startMediaServer(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:http')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="300" viewBox="0 0 480 300">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#2b59c3"/><stop offset="1" stop-color="#8ab4f8"/></linearGradient></defs>
    <rect width="480" height="300" fill="url(#g)"/><circle cx="380" cy="80" r="40" fill="#ffd166"/>
    <path d="M0 300 L160 150 L260 240 L340 170 L480 300 Z" fill="#1b3a7a"/></svg>`
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=60' })
    res.end(svg)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as import('node:net').AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    // The browser may still hold a connection (keep-alive, or a request in flight): close() alone waited for it and
    // the test's teardown timed out once in a full run.
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    }),
  }
}
