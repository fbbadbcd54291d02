import { rmSync } from 'node:fs'
import { expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { buildApp } from '../../src/app.js'
import { bootstrap } from '../../src/domain/bootstrap.js'
import type { App } from '../../src/http/types.js'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { describeBrowser, launchBrowser, openChat, secondParticipant, typeAndSend, watchErrors } from './browser.js'

/** Stops the harness's server and starts a new one on the same data directory and port, as a restart would. */
async function restart(h: Harness): Promise<{ app: App; close(): Promise<void> }> {
  const port = Number(new URL(h.baseUrl).port)
  // Like a process that is killed and started again: every connection drops at once. (A graceful app.close()
  // currently waits for open streams: ConversationStreams.closeAll does not end their responses.)
  const closing = h.app.close()
  h.app.server.closeAllConnections()
  await closing
  await h.pubsub.close()
  await h.blobs.close?.()
  await h.store.close()
  const adapters = await createAdapters(h.config)
  const { store } = adapters
  const app = await buildApp({ config: h.config, ...adapters, logger: false })
  await app.listen({ port, host: '127.0.0.1' })
  expect((await bootstrap(store, h.dataDir, h.baseUrl)).created).toBe(false) // what every start does: nothing new here
  return {
    app,
    async close() {
      await app.close()
      await closeAdapters(adapters)
      rmSync(h.dataDir, { recursive: true, force: true })
    },
  }
}

const texts = (page: Page) => page.$$eval('#pw-log article .pw-bubble', (els) => els.map((e) => e.textContent ?? ''))
const connection = (page: Page) => page.$eval('#parley-webchat', (el) => (el as HTMLElement).dataset.connection)

describeBrowser('webchat across a server restart', () => {
  it('reconnects by itself, keeps its history, and shows messages sent meanwhile exactly once', async () => {
    const h = await startParley({ listen: true, store: 'sqlite' })
    const browser = await launchBrowser()
    let restarted: { close(): Promise<void> } | undefined
    try {
      const page = await browser.newPage()
      const errors = watchErrors(page)
      await openChat(page, h.credentials.chat.webchatUrl!)
      const agent = await secondParticipant(h.credentials.chat.url, page)
      await typeAndSend(page, 'mine before restart')
      await agent.say({ type: 'text', text: 'agent before restart' })
      await page.locator('#pw-log article', { hasText: 'agent before restart' }).waitFor()
      expect(await connection(page)).toBe('open')

      // Stop: the stream ends, the page says it is reconnecting.
      const stopping = restart(h)
      await expect.poll(() => connection(page), { timeout: 10_000 }).toBe('reconnecting')
      restarted = await stopping
      // A message written before the page is back: it must arrive by the stream's replay or the catch-up.
      await agent.say({ type: 'text', text: 'agent while the page reconnects' })
      await expect.poll(() => connection(page), { timeout: 20_000 }).toBe('open')
      await page.locator('#pw-log article', { hasText: 'agent while the page reconnects' }).waitFor()

      // Live again in both directions.
      await typeAndSend(page, 'mine after restart')
      await page.locator('#pw-log article.pw-msg-mine', { hasText: 'mine after restart' }).waitFor()
      await agent.say({ type: 'text', text: 'agent after restart' })
      await page.locator('#pw-log article', { hasText: 'agent after restart' }).waitFor()
      await page.waitForTimeout(500) // room for a duplicate to show up, if there were one

      const expected = ['mine before restart', 'agent before restart', 'agent while the page reconnects', 'mine after restart', 'agent after restart']
      expect(await texts(page)).toEqual(expected)

      // A reload shows the same history, from the server.
      await page.reload()
      await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
      await expect.poll(() => texts(page)).toEqual(expected)
      expect(errors).toEqual([])
    } finally {
      await browser.close()
      if (restarted) await restarted.close()
      else await h.close()
    }
  }, 60_000)
})
