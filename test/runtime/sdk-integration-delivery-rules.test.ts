/**
 * Delivery semantics (issue #25 item 2; src/runtime/delivery-policy.ts, docs/sdk-bots.md "Delivery semantics") for an
 * unchanged @botpress/sdk integration (test/fixtures/sdk-integrations/relay.mjs, a child process written the way
 * Botpress's channel integrations handle messages) behind a counting proxy (test/helpers/front-proxy.ts, the stand-in
 * for a load balancer), bridging an outside chat service (startOutsideChat: a stand-in that counts what it was sent).
 * A bot's reply goes to the integration as message_created; the call timeout (PARLEY_REMOTE_BOT_TIMEOUT_MS, 300 ms
 * here) is shorter than the slow handler (SLOW_MS): before, a message was sent again when it ran out. Pass/fail by
 * counts: POSTs received, handler runs, what the outside service got, tags, log lines, quality records.
 * Elsewhere: the integration's process down (connections refused) then up, in test/runtime/sdk-integration-delivery.test.ts;
 * `register` answered with an SDK error (registration_failed with the reason), in test/runtime/installations.test.ts.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { DELIVERY_ERROR_TAG, DELIVERY_TAG } from '../../src/runtime/integration-delivery.js'
import definition from '../fixtures/sdk-integrations/relay.definition.mjs'
import { startFrontProxy, type FrontProxy } from '../helpers/front-proxy.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { eventually } from '../helpers/runtime-bot.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import type { SdkBot } from '../helpers/sdk-bot.js'
import { hostSdkIntegration, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { adminClient, qualityTotals, STREAM_CONFIG, uid, WAIT_MS, type TestBot } from './helpers.js'

/** The breaker off: a program down behind the proxy (502) is retried, not paused (pausing: endpoint-isolation.test.ts). */
const DELIVERY = { ...loadConfig({}).delivery, breakerFailures: 0 }
const SLOW_MS = '1200'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ payload: { type: 'text', text: 'reply: ' + event.payload.text } })
  },
}
`

/** The integration hosted behind a counting proxy, a bot with it installed as `relay`, and the outside service. */
async function hostBehindProxy(h: Harness) {
  const outside = await startOutsideChat()
  const hosted = await hostSdkIntegration(h, {
    definition, script: '../sdk-integrations/relay.mjs', alias: 'relay', code: CODE,
    installation: { configuration: { serviceUrl: outside.url } }, env: { SLOW_MS },
  })
  const proxy = await startFrontProxy(hosted.program.url)
  await adminClient(h).updateIntegration({ id: hosted.integrationId, url: proxy.url } as never)
  return { outside, proxy, ...hosted }
}

describe('delivery semantics: an @botpress/sdk integration', () => {
  let h: Harness
  let outside: OutsideChat
  let proxy: FrontProxy
  let program: SdkBot
  let bot: TestBot
  let integrationId: string
  let integrationKey: string
  const startDate = new Date().toISOString().slice(0, 10)

  /** A user's message in a new chat, written as the integration writes it (its Runtime API calls); the bot replies `reply: <text>`. */
  const say = (text: string) => userSays(h, { integrationId, integrationKey, bot }, text)
  /** The bot's reply in the conversation once its delivery is over (tagged delivered or failed), with nothing left in flight. */
  async function settledReply(conversationId: string) {
    const client = await runtimeClient(h, bot.id)
    const reply = await eventually('the reply\'s delivery outcome', async () => {
      const { messages } = await client.listMessages({ conversationId })
      return messages.find((m) => m.direction === 'outgoing' && m.tags[DELIVERY_TAG] !== undefined)
    }, WAIT_MS)
    await h.app.services.outgoingDeliveries.idle()
    return reply
  }
  /** message_created POSTs the proxy received for a message; the integration's handler runs for it (its stdout). */
  const posts = (id: string) => proxy.posts.filter((p) => p.operation === 'message_created' && p.body.includes(id))
  const handled = (id: string) => program.output().split('\n').filter((l) => l === `sending ${id}`).length
  const sentTo = (chatId: string) => outside.sent.filter((s) => s.chatId === chatId).length

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: { timeoutMs: 300, budgetMs: 20_000, attempts: 20, backoffMs: 50, maxBackoffMs: 1_000 }, delivery: DELIVERY, botSweepMs: 300 } })
    ;({ outside, proxy, program, bot, integrationId, integrationKey } = await hostBehindProxy(h))
  })
  afterAll(async () => {
    await program?.stop()
    await proxy?.close()
    await outside?.close()
    await h?.close()
  })

  it('a handler slower than the call timeout, within the budget: one POST, sent out once, tagged delivered', async () => {
    const { chatId, conversationId } = await say('take your time [slow]')
    const reply = await settledReply(conversationId)
    expect(reply.tags[DELIVERY_TAG]).toBe('delivered')
    expect([posts(reply.id).length, handled(reply.id), sentTo(chatId)]).toEqual([1, 1, 1])
    expect(reply.tags.id).toBe(String(outside.sent.find((s) => s.chatId === chatId)!.id))
  })

  it('a handler that sends, then throws: sent out once, final, in getIntegrationLogs, the bot\'s logs and quality analytics', async () => {
    const { chatId, conversationId } = await say('mark it read [then fail]')
    const reply = await settledReply(conversationId)
    expect([reply.tags[DELIVERY_TAG], posts(reply.id).length, handled(reply.id), sentTo(chatId)]).toEqual(['failed', 1, 1, 1])
    // The SDK's 400 RuntimeError, its message quoted (the outside stand-in knows no read receipts: 404).
    const reason = 'answered 400 (Runtime: Fail to mark the message read: the chat service answered 404)'
    expect(reply.tags[DELIVERY_ERROR_TAG]).toBe(reason)
    const { logs } = await adminClient(h).getIntegrationLogs({ id: integrationId, timeStart: new Date(0).toISOString() })
    const line = logs.find((l) => l.level === 'error' && l.message.includes(reply.id))
    expect(line?.message).toMatch(new RegExp(`failed after 1 attempt\\(s\\): ${reason.replace(/[()]/g, '\\$&')}$`))
    expect(await qualityTotals(h, bot.id, startDate)).toEqual({ failedTurns: 1, timedOutTurns: 0 })
  })

  it('a 503 from the proxy, then the integration: sent again once, sent out once', async () => {
    proxy.refuse('message_created', 503)
    const { chatId, conversationId } = await say('after a 503')
    const reply = await settledReply(conversationId)
    expect([reply.tags[DELIVERY_TAG], posts(reply.id).length, handled(reply.id), sentTo(chatId)]).toEqual(['delivered', 2, 1, 1])
  })

  it('a 429 with Retry-After: sent again once, after it (not after the 50 ms backoff), sent out once', async () => {
    proxy.refuse('message_created', 429, { 'retry-after': '1' })
    const { chatId, conversationId } = await say('after a 429')
    const reply = await settledReply(conversationId)
    expect([reply.tags[DELIVERY_TAG], posts(reply.id).length, handled(reply.id), sentTo(chatId)]).toEqual(['delivered', 2, 1, 1])
    const [first, second] = posts(reply.id)
    // A lower bound only (the wait it was told, within maxBackoffMs): never fails for a slow machine. A timer may fire a ms early.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990)
  })

  it('the integration\'s process down behind the proxy (502), then up: delivered, sent out once', async () => {
    await program.stop()
    let conversationId = ''
    let chatId = ''
    try {
      ;({ chatId, conversationId } = await say('while down'))
      await eventually('two refused message_created', async () => (proxy.posts.filter((p) => p.operation === 'message_created' && p.body.includes(conversationId)).length >= 2 ? true : undefined), WAIT_MS)
    } finally {
      await program.start()
    }
    const reply = await settledReply(conversationId)
    expect(reply.tags[DELIVERY_TAG]).toBe('delivered')
    expect(posts(reply.id).length).toBeGreaterThanOrEqual(3)
    expect([handled(reply.id), sentTo(chatId)]).toEqual([1, 1])
  })
})

/**
 * A user's message in a new chat, written through the Runtime API as the integration's webhook handler writes it (not
 * through {webhookUrl}: the caller's wait there is the short call timeout of these tests; relays: the last describe).
 */
async function userSays(h: Harness, hosted: { integrationId: string; integrationKey: string; bot: TestBot }, text: string) {
  const client = new Client({ apiUrl: h.baseUrl, token: hosted.integrationKey, botId: hosted.bot.id, integrationId: hosted.integrationId })
  const chatId = uid('chat')
  const { user } = await client.getOrCreateUser({ tags: { id: 'ann' } })
  const { conversation } = await client.getOrCreateConversation({ channel: 'chat', tags: { id: chatId } })
  await client.createMessage({ conversationId: conversation.id, userId: user.id, type: 'text', payload: { text }, tags: { id: uid('m') } })
  return { chatId, conversationId: conversation.id }
}

describe('delivery semantics: a webhook relayed to an @botpress/sdk integration', () => {
  let h: Harness
  let hosted: Awaited<ReturnType<typeof hostBehindProxy>>

  beforeAll(async () => {
    // The caller's wait (PARLEY_REMOTE_BOT_TIMEOUT_MS) long enough for the integration's handler on a busy machine.
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: { timeoutMs: 10_000, budgetMs: 20_000, attempts: 6, backoffMs: 50, maxBackoffMs: 500 }, delivery: DELIVERY } })
    hosted = await hostBehindProxy(h)
  })
  afterAll(async () => {
    await hosted?.program.stop()
    await hosted?.proxy.close()
    await hosted?.outside.close()
    await h?.close()
  })

  it('webhook_received answered 503 once: sent again within the caller\'s wait, handled once, the caller gets the integration\'s answer', async () => {
    const { proxy, outside, webhookUrl } = hosted
    proxy.refuse('webhook_received', 503)
    const chatId = uid('chat')
    const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'bob', chatId, messageId: uid('m'), text: 'through a restart' }) })
    expect(res.status).toBe(200)
    const { conversationId } = (await res.json()) as { conversationId: string }
    expect(proxy.count('webhook_received')).toBe(2)
    await outside.waitFor(() => outside.sent.some((s) => s.chatId === chatId), 'the bot\'s reply')
    await h.app.services.outgoingDeliveries.idle()
    const { messages } = await (await runtimeClient(h, hosted.bot.id)).listMessages({ conversationId })
    expect(messages.map((m) => m.direction).sort()).toEqual(['incoming', 'outgoing'])
    expect(outside.sent.filter((s) => s.chatId === chatId)).toHaveLength(1)
  })
})
