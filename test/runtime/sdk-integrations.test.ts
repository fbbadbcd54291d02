/**
 * An unchanged @botpress/sdk@5.4.3 integration (test/fixtures/sdk-integrations/outside-chat.mjs, written with
 * `new IntegrationDefinition` / `new Integration`) run as a child process over real HTTP, bridging a small
 * outside chat service the test runs: defined with createIntegration, its key from createIntegrationApiKey
 * (its BP_TOKEN), installed on a bot with updateBot({ integrations: { outside: … } }). A verification
 * handshake through webhookUrl, an outside message → bot turn → the reply delivered to the outside
 * service (and acked with its outside id), a redelivered message deduped, an integration action called
 * with the bot's client, and the same person through chat and through the integration as two users.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import type { SdkBot } from '../helpers/sdk-bot.js'
import { hostSdkIntegration, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { adminClient, createBot, STREAM_CONFIG, Talk, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 10_000, attempts: 4, backoffMs: 100, maxBackoffMs: 400 }

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ payload: { type: 'text', text: 'bot says: ' + event.payload.text } })
  },
}
`

describe('an unchanged @botpress/sdk integration hosted by Parley', () => {
  let h: Harness
  let outside: OutsideChat
  let program: SdkBot
  let bot: TestBot
  let integrationId: string
  let webhookUrl: string
  let botClient: Client

  const deliver = (body: Record<string, string>) =>
    fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    outside = await startOutsideChat()
    ;({ integrationId, program, bot, webhookUrl } = await hostSdkIntegration(h, {
      definition, script: '../sdk-integrations/outside-chat.mjs', alias: 'outside', code: CODE,
      installation: { configuration: { serviceUrl: outside.url, verifyToken: 'let-me-in' } },
    }))
    botClient = await runtimeClient(h, bot.id)
  })
  afterAll(async () => {
    await program?.stop()
    await outside?.close()
    await h?.close()
  })

  it('installs: getBot reports the installation, the integration gets register with its webhookUrl', async () => {
    const { bot: full } = await adminClient(h).getBot({ id: bot.id })
    const installed = full.integrations.outside!
    expect(installed).toMatchObject({ id: integrationId, name: 'outside-chat', version: '1.0.0', enabled: true, configurationType: null })
    expect(installed.webhookUrl).toBe(`${h.baseUrl}/integration-webhooks/${installed.webhookId}`)
    const registration = await outside.waitFor(() => outside.registrations.find((r) => r.botId === bot.id), 'register')
    expect(registration).toEqual({ webhookUrl, botId: bot.id, alias: 'outside' })
    // The built-in chat integration is still there, as before.
    expect(full.integrations.chat!.webhookUrl).toBe(bot.url)
  })

  it('answers a verification handshake through webhookUrl with the integration\'s status, body and allowlisted headers', async () => {
    const ok = await fetch(`${webhookUrl}/verify?verify_token=let-me-in&challenge=abc123`)
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toBe('text/plain')
    // Only an allowlist of the integration's headers is relayed (src/http/untrusted-content.ts): not its custom ones.
    expect(ok.headers.get('x-handshake')).toBeNull()
    expect(await ok.text()).toBe('abc123')
    const refused = await fetch(`${webhookUrl}?verify_token=wrong&challenge=x`)
    expect(refused.status).toBe(403)
    expect(await refused.text()).toBe('wrong verify token')
  })

  it('an outside message starts a bot turn; the reply reaches the outside service and is acked with its outside id; a redelivery is deduped', async () => {
    const first = await deliver({ userId: 'alice', userName: 'Alice', chatId: 'chat-1', messageId: 'out-1', text: 'hello' })
    expect(first.status).toBe(200)
    const { conversationId, userId, messageId } = (await first.json()) as { conversationId: string; userId: string; messageId: string }
    const reply = await outside.waitFor(() => outside.sent.find((s) => s.text === 'bot says: hello'), 'reply to hello')
    expect(reply.chatId).toBe('chat-1')

    // The same outside message delivered again: the same Parley message, no second turn.
    const again = await deliver({ userId: 'alice', chatId: 'chat-1', messageId: 'out-1', text: 'hello' })
    expect(((await again.json()) as { messageId: string }).messageId).toBe(messageId)
    await deliver({ userId: 'alice', chatId: 'chat-1', messageId: 'out-2', text: 'again' })
    await outside.waitFor(() => outside.sent.find((s) => s.text === 'bot says: again'), 'reply to again')
    expect(outside.sent.filter((s) => s.chatId === 'chat-1').map((s) => s.text)).toEqual(['bot says: hello', 'bot says: again'])

    // What the bot sees: the conversation of the installation's channel, the outside ids as tags, the ack stored.
    const { conversation } = await botClient.getConversation({ id: conversationId })
    expect(conversation).toMatchObject({ integration: 'outside', channel: 'channel', tags: { id: 'chat-1' } })
    const { user } = await botClient.getUser({ id: userId })
    expect(user).toMatchObject({ tags: { id: 'alice' }, name: 'Alice' })
    const { messages } = await botClient.listMessages({ conversationId })
    expect(messages.filter((m) => m.direction === 'incoming')).toHaveLength(2)
    const botReplies = messages.filter((m) => m.direction === 'outgoing')
    expect(botReplies).toHaveLength(2)
    const sentIds = outside.sent.filter((s) => s.chatId === 'chat-1').map((s) => String(s.id)).sort()
    // ack runs after the outside service answered; it is done before the next delivery starts (ordered).
    const { message: firstReply } = await botClient.getMessage({ id: botReplies.find((m) => (m.payload as { text: string }).text === 'bot says: hello')!.id })
    expect(sentIds).toContain(firstReply.tags.id)
  })

  it('the outside service down: the integration\'s handler throws, final at once (not sent again), the failure in the integration\'s logs; back up, the next reply is delivered', async () => {
    // #25 item 2: the SDK's 400 RuntimeError is the integration's code answering; only what it did not get is sent again.
    outside.down = true
    const refusedBefore = outside.refused
    try {
      await deliver({ userId: 'carol', chatId: 'chat-carol', messageId: 'carol-1', text: 'lost' })
      const admin = adminClient(h)
      let logs: { level: string; message: string }[] = []
      for (let i = 0; i < 100 && !logs.some((l) => l.level === 'error'); i++) {
        logs = (await admin.getIntegrationLogs({ id: integrationId, timeStart: new Date(0).toISOString() })).logs
        if (!logs.some((l) => l.level === 'error')) await new Promise((r) => setTimeout(r, 100))
      }
      expect(logs.find((l) => l.level === 'error')?.message).toMatch(/failed after 1 attempt\(s\): answered 400 \(Runtime: http:\/\/127\.0\.0\.1:\d+\/send answered 503\)$/)
      await h.app.services.outgoingDeliveries.idle()
      expect(outside.refused - refusedBefore).toBe(1)
    } finally {
      outside.down = false
    }
    await deliver({ userId: 'carol', chatId: 'chat-carol', messageId: 'carol-2', text: 'are you there' })
    await outside.waitFor(() => outside.sent.find((s) => s.text === 'bot says: are you there'), 'the next reply')
    expect(outside.sent.some((s) => s.text === 'bot says: lost')).toBe(false)
  })

  it('an action of the integration called with the bot\'s client (alias:action) answers its output', async () => {
    const { output } = await botClient.callAction({ type: 'outside:lookup', input: { q: 'weather' } })
    expect(output).toEqual({ answer: 'weather looked up by outside' })
    expect(await failure(botClient.callAction({ type: 'outside:nope', input: {} }))).toMatchObject({ code: 404 })
  })

  it('the same person through the chat integration and through this integration is two users', async () => {
    const first = await deliver({ userId: 'bob', chatId: 'chat-bob', messageId: 'bob-1', text: 'via outside' })
    const viaIntegration = ((await first.json()) as { userId: string }).userId
    await outside.waitFor(() => outside.sent.find((s) => s.text === 'bot says: via outside'), 'reply via outside')
    const talk = await Talk.open(bot, { userId: 'bob' })
    try {
      expect(await talk.askText('via chat')).toEqual(['bot says: via chat'])
      const chatUser = (await talk.user.getUser({})).user
      expect(chatUser.id).not.toBe(viaIntegration)
      expect((await botClient.getUser({ id: viaIntegration })).user.tags).toEqual({ id: 'bob' })
    } finally {
      await talk.close()
    }
    // The chat reply went to the chat user only, not to the outside service.
    expect(outside.sent.some((s) => s.text === 'bot says: via chat')).toBe(false)
  })

  it('the integration\'s own webhook path cannot be steered by forged protocol headers', async () => {
    const res = await fetch(`${webhookUrl}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bp-operation': 'action_triggered', 'x-bot-id': 'someone-else', 'x-integration-id': 'other', 'x-bp-type': 'lookup' },
      body: '{}',
    })
    expect(await res.json()).toEqual({ operation: 'webhook_received', botId: bot.id, integrationId, alias: 'outside', method: 'POST' })
  })

  it('disabling the installation sends unregister; its webhookUrl then answers 404', async () => {
    const other = await createBot(h, CODE)
    const admin = adminClient(h)
    await admin.updateBot({ id: other.id, integrations: { second: { integrationId, configuration: { serviceUrl: outside.url, verifyToken: 'tok-2' } } } } as never)
    const url = (await admin.getBot({ id: other.id })).bot.integrations.second!.webhookUrl
    await outside.waitFor(() => outside.registrations.find((r) => r.botId === other.id), 'register of the second bot')
    await admin.updateBot({ id: other.id, integrations: { second: null } } as never)
    await outside.waitFor(() => outside.unregistrations.find((r) => r.botId === other.id), 'unregister')
    expect((await fetch(`${url}/echo`, { method: 'POST', body: '{}' })).status).toBe(404)
  })
})
