/**
 * The console's handoff inbox in Chromium, with two browser contexts: a user in the webchat and an agent (role
 * `agent`, signed in with a token) in the console. A bot deployed here hands off on "human" (client.startHandoff);
 * the agent picks the bot (agents list bots: bots.list), sees the conversation waiting with its reason, opens it
 * (the live transcript shows the user's next message without a reload), claims it, replies with text and quick
 * replies and an image (uploaded through createBotHandoffFileUpload) — all arrive in the webchat —, writes an
 * internal note (hostile HTML, shown as text; never in the webchat), returns the conversation to the bot, and the bot
 * answers the user's next message again. Screenshots as artifacts; axe-core with no serious violation.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Browser, BrowserContext } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { ChatClient } from '../helpers/chat-client.js'
import { createBot, type TestBot } from '../runtime/helpers.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, openChat, typeAndSend, watchErrors } from './browser.js'

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'handoff_started') {
      await client.createMessage({ payload: { type: 'text', text: 'A person will answer you here shortly.' } })
      return
    }
    if (event.type === 'handoff_ended') {
      await client.createMessage({ payload: { type: 'text', text: 'You are back with the bot.' } })
      return
    }
    if (event.type !== 'text' || event.trigger) return
    if (event.payload.text === 'human') {
      await client.startHandoff({ reason: 'the user asked for a human' })
      return
    }
    await client.createMessage({ payload: { type: 'text', text: 'echo: ' + event.payload.text } })
  },
}
`

/** The agent's attachment: a picture. */
const PICTURE = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="240" height="150" viewBox="0 0 240 150">
<rect width="240" height="150" fill="#2b59c3"/><circle cx="190" cy="40" r="20" fill="#ffd166"/><path d="M0 150 L80 75 L130 120 L170 85 L240 150 Z" fill="#1b3a7a"/></svg>`)

describeBrowser('the console\'s handoff inbox in Chromium', () => {
  let h: Harness
  let browser: Browser
  let bot: TestBot
  let webchatUrl: string
  let agent: { id: string; token: string; email: string }
  const contexts: BrowserContext[] = []

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true, config: { sseKeepAliveMs: 1000 } }), launchBrowser()])
    const admin = adminClient(h)
    bot = await createBot(h, CODE, 'Inbox bot')
    webchatUrl = (await admin('GET', `/bots/${bot.id}`)).body.bot.integrations.chat.webchatUrl as string
    const email = `agent-${randomUUID().slice(0, 8)}@example.com`
    const member = await admin('POST', '/workspace-members', { body: { email, role: 'agent' } })
    expect(member.status, member.text).toBe(201)
    agent = { id: member.body.id as string, token: member.body.pat.value as string, email }
  })
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined)
    await browser?.close()
    await h?.close()
  })

  it('an agent takes a handoff started by bot code, replies into the webchat, notes stay internal, the bot answers again', async () => {
    // The user, in the webchat.
    const userContext = await browser.newContext({ viewport: { width: 900, height: 900 } })
    contexts.push(userContext)
    const chat = await userContext.newPage()
    const chatErrors = watchErrors(chat)
    const { conversationId } = await openChat(chat, webchatUrl)
    const log = chat.locator('#pw-log')
    await typeAndSend(chat, 'hello')
    await log.locator('article.pw-msg-theirs', { hasText: 'echo: hello' }).waitFor()
    await typeAndSend(chat, 'human')
    await log.locator('article.pw-msg-theirs', { hasText: 'A person will answer you here shortly.' }).waitFor()

    // The agent, in the console.
    const agentContext = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
    contexts.push(agentContext)
    const page = await agentContext.newPage()
    const errors = watchErrors(page)
    await page.goto(`${h.baseUrl}/console/`)
    await page.getByLabel('Personal access token').fill(agent.token)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText(`Signed in as ${agent.email}`).waitFor()
    // Agents may list the workspace's bots: the picker has them, and the agent picks the one that handed off.
    await page.locator('#bot').selectOption(bot.id)
    await page.getByRole('link', { name: 'Inbox' }).click()
    await page.getByRole('heading', { name: 'Inbox' }).waitFor()
    const waiting = page.locator(`#inbox-waiting button[data-conversation="${conversationId}"]`)
    await waiting.waitFor()
    expect(await waiting.textContent()).toContain('the user asked for a human')
    expect(await waiting.textContent()).toMatch(/Waiting for \d+ s/)
    await waiting.click()
    const transcript = page.locator('#handoff-transcript')
    await transcript.getByText('human', { exact: true }).waitFor()
    await page.locator('#live-status', { hasText: 'Live' }).waitFor()

    // Live: the user's next messages appear without a reload (hostile HTML as text).
    await typeAndSend(chat, 'is anyone there?')
    await transcript.getByText('is anyone there?').waitFor()
    await typeAndSend(chat, HOSTILE)
    await transcript.getByText(HOSTILE).waitFor()
    expect(await transcript.locator('img[src="x"], script').count()).toBe(0)
    // Handed off: the bot does not answer.
    expect(await log.locator('article.pw-msg-theirs', { hasText: 'echo: is anyone there?' }).count()).toBe(0)

    // Claim: the webchat shows the agent joining.
    await page.getByRole('button', { name: 'Claim' }).click()
    await page.locator('#handoff-summary', { hasText: 'Answered by you' }).waitFor()
    await log.locator('.pw-system[data-handoff="joined"]').waitFor()
    await page.locator(`#inbox-active button[data-conversation="${conversationId}"]`).waitFor()

    // A reply with quick replies.
    await page.getByLabel('Reply', { exact: true }).fill('Hello, a person here. Shall I reset it?')
    await page.getByLabel('Quick replies (optional)').fill('Yes please\nNo thanks')
    await page.getByRole('button', { name: 'Send' }).click()
    const reply = log.locator('article.pw-msg-theirs', { hasText: 'Hello, a person here. Shall I reset it?' })
    await reply.waitFor()
    await reply.getByRole('button', { name: 'Yes please' }).waitFor()
    await reply.getByRole('button', { name: 'No thanks' }).waitFor()
    expect(await reply.locator('.pw-agent-name').count()).toBe(1)
    await transcript.getByText('Hello, a person here. Shall I reset it?').waitFor()

    // An image, uploaded through the Files API.
    await page.getByLabel('Attach an image or a file').setInputFiles({ name: 'mountains.svg', mimeType: 'image/svg+xml', buffer: PICTURE })
    await page.getByRole('button', { name: 'Send' }).click()
    const image = log.locator('article.pw-msg-theirs img.pw-image')
    await image.waitFor()
    const src = await image.getAttribute('src')
    expect(src).toContain('/v1/files/content/')
    const content = await fetch(src!)
    expect(content.status).toBe(200)
    expect(Buffer.from(await content.arrayBuffer()).equals(PICTURE)).toBe(true)
    await transcript.locator('img.pw-image').waitFor()

    // An internal note: in the console, as text; never in the webchat.
    const note = `Internal: VIP ${randomUUID().slice(0, 6)} ${HOSTILE}`
    await page.getByLabel('Note', { exact: true }).fill(note)
    await page.getByRole('button', { name: 'Add note' }).click()
    await page.locator('#handoff-notes').getByText(note).waitFor()
    expect(await page.locator('#handoff-notes img[src="x"], #handoff-notes script').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    await page.screenshot({ path: artifactPath('console-inbox.png'), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])

    // Return to the bot: the webchat shows the agent leaving, and the bot answers again.
    await page.getByRole('button', { name: 'Return to the bot' }).click()
    await page.locator('#handoff-summary', { hasText: 'Returned to the bot' }).waitFor()
    await log.locator('.pw-system[data-handoff="left"]').waitFor()
    await log.locator('article.pw-msg-theirs', { hasText: 'You are back with the bot.' }).waitFor()
    await typeAndSend(chat, 'back again')
    await log.locator('article.pw-msg-theirs', { hasText: 'echo: back again' }).waitFor()
    // The messages written while handed off ran no hook: the bot never answered them, not even after the handoff.
    expect(await log.locator('article.pw-msg-theirs', { hasText: 'echo: is anyone there?' }).count()).toBe(0)
    // The console's live transcript shows the bot's answer too.
    await transcript.getByText('echo: back again').waitFor()
    await expect.poll(() => page.locator(`#inbox-active button[data-conversation="${conversationId}"]`).count()).toBe(0)

    // The note never reached the user: not on the page, not in its history.
    expect(await log.textContent()).not.toContain('VIP')
    await chat.reload()
    await chat.waitForSelector('#parley-webchat[data-state="ready"]', { state: 'attached' })
    await log.locator('article.pw-msg-theirs', { hasText: 'echo: back again' }).waitFor()
    expect(await log.textContent()).not.toContain('VIP')
    await chat.screenshot({ path: artifactPath('console-inbox-webchat.png') })
    expect(await seriousViolations(chat)).toEqual([])
    expect(errors).toEqual([])
    expect(chatErrors).toEqual([])
  })

  it('a manager (here the owner) assigns a waiting conversation to an agent; the owner\'s reply form goes away', async () => {
    const chat = new ChatClient(h.app, bot.webhookId, '')
    const { key } = await chat.createUser({ name: 'Grace' })
    const conversation = await chat.createConversation(key)
    await chat.createMessage(key, conversation.id, { type: 'text', text: 'my order is late' })
    const started = await adminClient(h)('POST', `/bots/${bot.id}/handoffs`, { body: { conversationId: conversation.id, reason: 'late order' } })
    expect(started.status, started.text).toBe(200)

    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
    contexts.push(context)
    const page = await context.newPage()
    const errors = watchErrors(page)
    await page.goto(`${h.baseUrl}/console/#/inbox`)
    await page.getByLabel('Personal access token').fill(h.credentials.token)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('Signed in as owner@localhost').waitFor()
    await page.locator('#bot').selectOption(bot.id)
    const waiting = page.locator(`#inbox-waiting button[data-conversation="${conversation.id}"]`)
    await waiting.waitFor()
    expect(await waiting.textContent()).toContain('late order')
    await waiting.click()
    await page.locator('#handoff-transcript').getByText('my order is late', { exact: true }).waitFor()
    await page.getByLabel('Assign to').selectOption(agent.id)
    await page.getByRole('button', { name: 'Assign' }).click()
    const summary = page.locator('#handoff-summary')
    await summary.getByText(/^Answered by agent-/).waitFor()
    // Held by the agent: the owner no longer has the reply form (a reply would be 409), but may still note and end.
    expect(await page.locator('form[aria-label="Reply to the user"]').isHidden()).toBe(true)
    expect(await page.getByRole('button', { name: 'Claim' }).isHidden()).toBe(true)
    await page.locator(`#inbox-active button[data-conversation="${conversation.id}"]`).waitFor()
    const handoff = await adminClient(h)('GET', `/bots/${bot.id}/handoffs/${conversation.id}`)
    expect(handoff.body.handoff).toMatchObject({ status: 'active', claimedBy: { memberId: agent.id } })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })
})
