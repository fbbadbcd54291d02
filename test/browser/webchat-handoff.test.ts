/**
 * Human handoff in the webchat, in Chromium: a member takes over a conversation through the Admin API; the
 * user's page shows "<name> joined the conversation" as a line, the agent's reply with their name and avatar
 * (initials) on the bubble and no feedback buttons, then "<name> left the conversation" when the conversation
 * returns to the bot. Screenshot and axe-core check.
 */
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, typeAndSend, watchErrors } from './browser.js'

describeBrowser('webchat human handoff in Chromium', () => {
  let demo: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[demo, browser] = await Promise.all([startParley({ listen: true, demoBot: true }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await demo?.close()
  })

  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${demo.baseUrl}/v1/admin/bots/${demo.credentials.botId}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.credentials.token}`, 'x-workspace-id': demo.credentials.workspaceId, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(res.status, await res.clone().text()).toBe(200)
    return res.json() as Promise<{ handoff: { claimedBy?: { name: string } } }>
  }

  it('joined / left lines and the agent\'s name and avatar on their messages', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const errors = watchErrors(page)
    const { conversationId } = await openChat(page, demo.credentials.chat.webchatUrl!)
    await typeAndSend(page, 'help')
    await page.locator('#pw-log article.pw-msg-mine', { hasText: 'help' }).waitFor()

    await admin('/handoffs', { conversationId, reason: 'browser test' })
    const claimed = await admin(`/handoffs/${conversationId}/claim`, {})
    const name = claimed.handoff.claimedBy!.name
    // The demo bot sees handoff_started and says so.
    await page.locator('#pw-log article.pw-msg-theirs', { hasText: 'A person will answer you here shortly.' }).waitFor()
    const joined = page.locator('#pw-log .pw-system[data-handoff="joined"]')
    await joined.waitFor()
    expect(await joined.textContent()).toBe(`${name} joined the conversation`)

    await admin(`/handoffs/${conversationId}/messages`, { type: 'text', payload: { text: 'Hello, a person here' } })
    const reply = page.locator('#pw-log article.pw-msg-theirs', { hasText: 'Hello, a person here' })
    await reply.waitFor()
    expect(await reply.locator('.pw-agent-name').textContent()).toBe(name)
    expect((await reply.locator('.pw-agent-initials').textContent())?.length).toBeGreaterThan(0)
    expect(await reply.locator('.pw-feedback').count()).toBe(0)
    expect(await reply.textContent()).toContain(`${name} said:`)

    await admin(`/handoffs/${conversationId}/end`, {})
    const left = page.locator('#pw-log .pw-system[data-handoff="left"]')
    await left.waitFor()
    expect(await left.textContent()).toBe(`${name} left the conversation`)
    await page.locator('#pw-log article.pw-msg-theirs', { hasText: 'You are back with the demo bot.' }).waitFor()
    await page.screenshot({ path: artifactPath('webchat-handoff-1024.png') })
    expect(await seriousViolations(page)).toEqual([])

    // A reload shows the same from the history.
    await page.reload()
    await page.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
    await page.locator('#pw-log .pw-system[data-handoff="left"]').waitFor()
    expect(await page.locator('#pw-log article.pw-msg-theirs .pw-agent-name').first().textContent()).toBe(name)
    expect(errors).toEqual([])
  })
})
