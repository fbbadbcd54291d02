/**
 * Outgoing delivery to an unchanged @botpress/sdk integration (test/fixtures/sdk-integrations/outside-chat.mjs, a
 * child process bridging a small outside chat service the test runs): the bot's replies are sent as
 * message_created from the conversation's log (src/runtime/integration-delivery.ts).
 * - the integration down (connections refused: not processed, so retried), then up: the replies arrive in order, each
 *   once, tagged parley:delivery=delivered (an integration that answers an error is final: test/runtime/delivery-semantics.test.ts);
 * - a restart of Parley (the harness's server stopped and started again on the same database) with replies not yet
 *   delivered: they are delivered after it, in order, once;
 * - kill -9 of a Parley process (tsx src/main.ts on the same data) while it retries a reply: the next instance takes
 *   the conversation over once the dead one's lease expired and delivers the reply, once; and the same state made
 *   directly (a dead owner's lease written in the store);
 * - a permanently dead integration: the reply fails visibly (the message's parley:delivery=failed tag and
 *   parley:deliveryError, getIntegrationLogs, getBotLogs); a disabled installation's messages fail at once;
 * - dedupe: an outside message the integration creates twice (createMessage with the same outside id, or
 *   getOrCreateMessage concurrently) is one message and one bot turn.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import { DELIVERY_ERROR_TAG, DELIVERY_TAG } from '../../src/runtime/integration-delivery.js'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { restartParley, startParley, type Harness } from '../helpers/harness.js'
import { loadConfig } from '../../src/config.js'
import { startParleyProcess } from '../helpers/parley-process.js'
import { parsePrometheus, sampleValue } from '../helpers/prometheus.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import type { SdkBot } from '../helpers/sdk-bot.js'
import { hostSdkIntegration, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { adminClient, allLogs, sleep, STREAM_CONFIG, WAIT_MS, type TestBot } from './helpers.js'

// Retries over about 10 s (backoff 200, 400, then 800 ms; 15 attempts): longer than the integration's process takes
// to start again on a busy machine (the tests that stop it start it once it was refused twice, and its start takes
// seconds there); with 6 attempts (3 s) a slow start made the reply fail, the first test's intermittent failure.
const REMOTE = { timeoutMs: 10_000, budgetMs: 20_000, attempts: 15, backoffMs: 200, maxBackoffMs: 800 }

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ payload: { type: 'text', text: 'bot says: ' + event.payload.text } })
  },
}
`

async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`)
    await sleep(100)
  }
}

describe('outgoing delivery to an @botpress/sdk integration', () => {
  let h: Harness
  let outside: OutsideChat
  let program: SdkBot
  let bot: TestBot
  let integrationId: string
  let webhookUrl: string
  let integrationKey: string

  const deliver = async (body: Record<string, string>) => {
    const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(res.status).toBe(200)
    return (await res.json()) as { conversationId: string; userId: string; messageId: string }
  }
  const sentTo = (chatId: string) => outside.sent.filter((s) => s.chatId === chatId).map((s) => s.text)
  /** The bot's replies in a conversation, oldest first, with their tags. */
  const replies = async (conversationId: string) => {
    const client = await runtimeClient(h, bot.id)
    const { messages } = await client.listMessages({ conversationId })
    return messages.filter((m) => m.direction === 'outgoing').reverse()
  }

  beforeAll(async () => {
    // The breaker off: these cases are about retries and giving up (a paused integration's replies wait instead: test/runtime/endpoint-isolation.test.ts).
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, botSweepMs: 300, delivery: { ...loadConfig({}).delivery, breakerFailures: 0 } } })
    outside = await startOutsideChat()
    ;({ integrationId, integrationKey, program, bot, webhookUrl } = await hostSdkIntegration(h, {
      definition, script: '../sdk-integrations/outside-chat.mjs', alias: 'outside', code: CODE,
      installation: { configuration: { serviceUrl: outside.url, verifyToken: 'let-me-in' } },
    }))
  })
  afterAll(async () => {
    await program?.stop()
    await outside?.close()
    await h?.close()
  })

  it('the integration down, then up: the replies arrive in order, each once, tagged delivered', async () => {
    let conversationId = ''
    for (const text of ['one', 'two', 'three']) ({ conversationId } = await deliver({ userId: 'ann', chatId: 'chat-order', messageId: `order-${text}`, text }))
    await delivered(conversationId, 3)
    const refused = await attemptsFailed(h.baseUrl)
    await program.stop()
    try {
      const client = integrationClient()
      const { user } = await client.getOrCreateUser({ tags: { id: 'ann' } })
      await client.createMessage({ conversationId, userId: user.id, type: 'text', payload: { text: 'four' }, tags: { id: 'order-four' } })
      // The fourth reply written, refused at least twice (the integration is down), not delivered.
      await until(async () => (await replies(conversationId)).length === 4, 'four replies')
      await until(async () => (await attemptsFailed(h.baseUrl)) >= refused + 2, 'two refused sends')
    } finally {
      await program.start()
    }
    await outside.waitFor(() => sentTo('chat-order').length === 4, 'the four replies')
    await h.app.services.outgoingDeliveries.idle()
    await sleep(300) // room for a duplicate
    expect(sentTo('chat-order')).toEqual(['bot says: one', 'bot says: two', 'bot says: three', 'bot says: four'])
    const tagged = await replies(conversationId)
    expect(tagged.map((m) => m.tags[DELIVERY_TAG])).toEqual(['delivered', 'delivered', 'delivered', 'delivered'])
    // The integration's ack: each reply carries the outside id the service gave it.
    const ids = outside.sent.filter((s) => s.chatId === 'chat-order').map((s) => String(s.id))
    expect(tagged.map((m) => m.tags.id)).toEqual(ids)
  })

  it('a restart with replies not yet delivered: they are delivered after it, in order, once', async () => {
    const { conversationId } = await deliver({ userId: 'ben', chatId: 'chat-restart', messageId: 'before restart 1', text: 'before restart 1' })
    await delivered(conversationId, 1)
    const refused = await attemptsFailed(h.baseUrl)
    await program.stop()
    await writeReply(conversationId, 'ben', 'before restart 2')
    await until(async () => (await replies(conversationId)).length === 2, 'two replies')
    await until(async () => (await attemptsFailed(h.baseUrl)) > refused, 'a refused send')
    h = await restartParley(h)
    await program.start()
    await outside.waitFor(() => sentTo('chat-restart').length === 2, 'the replies after the restart')
    await h.app.services.outgoingDeliveries.idle()
    await sleep(300)
    expect(sentTo('chat-restart')).toEqual(['bot says: before restart 1', 'bot says: before restart 2'])
    expect((await replies(conversationId)).map((m) => m.tags[DELIVERY_TAG])).toEqual(['delivered', 'delivered'])
  })

  it('kill -9 of a Parley process with a reply on its way: the next instance delivers it, once', async () => {
    await h.stop()
    // The same data and port, as a process of its own; a 3 s request timeout keeps its lease short (3 + 5 s).
    const crashing = await startParleyProcess(h, {
      PARLEY_REMOTE_BOT_TIMEOUT_MS: '3000', PARLEY_DELIVERY_BUDGET_MS: '3000', PARLEY_REMOTE_BOT_ATTEMPTS: '50', PARLEY_REMOTE_BOT_BACKOFF_MS: '200', PARLEY_REMOTE_BOT_MAX_BACKOFF_MS: '800',
      PARLEY_BOT_SWEEP_MS: '300',
    })
    await program.stop()
    let conversationId = ''
    try {
      const refused = await attemptsFailed(h.baseUrl)
      // The outside message as the integration creates it (its Runtime API calls), on the process.
      const client = integrationClient()
      const { user } = await client.getOrCreateUser({ tags: { id: 'kim' } })
      const { conversation } = await client.getOrCreateConversation({ channel: 'channel', tags: { id: 'chat-kill' } })
      conversationId = conversation.id
      await client.createMessage({ conversationId, userId: user.id, type: 'text', payload: { text: 'before kill -9' }, tags: { id: 'kill-1' } })
      await until(async () => (await attemptsFailed(h.baseUrl)) > refused, 'a refused send from the process')
    } finally {
      await crashing.kill()
    }
    await program.start()
    h = await restartParley(h)
    await outside.waitFor(() => sentTo('chat-kill').length === 1, 'the reply after the crash', 40_000)
    await h.app.services.outgoingDeliveries.idle()
    await sleep(300)
    expect(sentTo('chat-kill')).toEqual(['bot says: before kill -9'])
    expect((await replies(conversationId)).map((m) => m.tags[DELIVERY_TAG])).toEqual(['delivered'])
  })

  it('what a crash (kill -9) leaves — a dead instance\'s lease: taken over once it expires, then delivered once', async () => {
    const { conversationId } = await deliver({ userId: 'cid', chatId: 'chat-crash', messageId: 'crash-0', text: 'first' })
    await delivered(conversationId, 1)
    const refused = await attemptsFailed(h.baseUrl)
    await program.stop()
    await writeReply(conversationId, 'cid', 'before the crash')
    await until(async () => (await replies(conversationId)).length === 2, 'the reply')
    await until(async () => (await attemptsFailed(h.baseUrl)) > refused, 'a refused send')
    // Stopped, then the lease a killed instance would still hold (its cursor before the reply) for 2 more seconds.
    await h.stop()
    const { store, ...rest } = await createAdapters(h.config)
    const leasedAt = Date.now()
    expect(await store.integrationOutbox.claim(await integrationOf(store, bot.id), conversationId, 'killed-instance', leasedAt, 2_000)).toBeDefined()
    await closeAdapters({ store, ...rest })
    await program.start()
    h = await restartParley(h)
    await outside.waitFor(() => sentTo('chat-crash').length === 2, 'the reply after the dead lease expired')
    expect(Date.now() - leasedAt).toBeGreaterThanOrEqual(2_000)
    await h.app.services.outgoingDeliveries.idle()
    await sleep(300)
    expect(sentTo('chat-crash')).toEqual(['bot says: first', 'bot says: before the crash'])
  })

  it('a permanently dead integration: the reply fails visibly (message tags, integration logs, bot logs)', async () => {
    await program.stop()
    try {
      // Webhooks go through the integration too: with it dead, the outside message is created as it would create it.
      const client = integrationClient()
      const { user } = await client.getOrCreateUser({ tags: { id: 'dee' } })
      const { conversation } = await client.getOrCreateConversation({ channel: 'channel', tags: { id: 'chat-dead' } })
      await client.createMessage({ conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: 'anyone' }, tags: { id: 'dead-1' } })
      const conversationId = conversation.id
      const [reply] = await until(async () => {
        const r = await replies(conversationId)
        return r[0]?.tags[DELIVERY_TAG] === 'failed' && r
      }, 'the reply tagged failed')
      expect(reply!.tags[DELIVERY_ERROR_TAG]).toMatch(/ECONNREFUSED|could not|socket|connect/i)
      const admin = adminClient(h)
      const { logs } = await admin.getIntegrationLogs({ id: integrationId, timeStart: new Date(0).toISOString() })
      const line = logs.find((l) => l.level === 'error' && l.message.includes(reply!.id))
      expect(line?.message).toMatch(/failed after 15 attempt\(s\)/)
      const botLogs = (await allLogs(h, bot.id)).logs
      expect(botLogs.find((l) => l.level === 'error' && l.message.includes(reply!.id))?.message).toBe(line!.message)
      // Listed by its status.
      const botClient = await runtimeClient(h, bot.id)
      const failed = await botClient.listMessages({ conversationId, tags: { [DELIVERY_TAG]: 'failed' } })
      expect(failed.messages.map((m) => m.id)).toEqual([reply!.id])
    } finally {
      await program.start()
    }
  })

  /** Waits until `count` replies of the conversation are delivered (the integration's handler answered: stopping it then cuts nothing). */
  const delivered = (conversationId: string, count: number) =>
    until(async () => (await replies(conversationId)).filter((m) => m.tags[DELIVERY_TAG] === 'delivered').length === count, `${count} delivered replies`)
  const integrationClient = () => new Client({ apiUrl: h.baseUrl, token: integrationKey, botId: bot.id, integrationId })
  /** An outside message written as the integration writes it (the bot replies to it), while the integration's process is down. */
  const writeReply = async (conversationId: string, userTag: string, text: string) => {
    const client = integrationClient()
    const { user } = await client.getOrCreateUser({ tags: { id: userTag } })
    await client.createMessage({ conversationId, userId: user.id, type: 'text', payload: { text }, tags: { id: text } })
  }

  it('dedupe: one outside message created twice by the integration (createMessage, getOrCreateMessage) is one message and one turn', async () => {
    const client = integrationClient()
    const { user } = await client.getOrCreateUser({ tags: { id: 'eve' }, name: 'Eve' })
    const again = await client.getOrCreateUser({ tags: { id: 'eve' } })
    expect(again.user.id).toBe(user.id)
    const { conversation } = await client.getOrCreateConversation({ channel: 'channel', tags: { id: 'chat-dedupe' } })
    expect((await client.getOrCreateConversation({ channel: 'channel', tags: { id: 'chat-dedupe' } })).conversation.id).toBe(conversation.id)
    const message = { conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: 'once' } }

    const first = await client.createMessage({ ...message, tags: { id: 'dup-1' } })
    const second = await client.createMessage({ ...message, tags: { id: 'dup-1' } })
    expect(second.message.id).toBe(first.message.id)
    // Concurrent redeliveries through getOrCreateMessage (the SDK's webhook handler) resolve to one message.
    const raced = await Promise.all(Array.from({ length: 4 }, () => client.getOrCreateMessage({ ...message, payload: { text: 'twice' }, tags: { id: 'dup-2' } })))
    expect(new Set(raced.map((r) => r.message.id)).size).toBe(1)
    expect(raced.filter((r) => r.meta.created)).toHaveLength(1)
    // A different outside id is another message.
    await client.createMessage({ ...message, payload: { text: 'thrice' }, tags: { id: 'dup-3' } })

    await outside.waitFor(() => sentTo('chat-dedupe').length >= 3, 'three replies')
    await h.app.services.outgoingDeliveries.idle()
    await sleep(500) // room for a second turn
    expect(sentTo('chat-dedupe')).toEqual(['bot says: once', 'bot says: twice', 'bot says: thrice'])
    const { messages } = await client.listMessages({ conversationId: conversation.id })
    expect(messages.filter((m) => m.direction === 'incoming')).toHaveLength(3)
  })

  it('a bot message in a conversation of a disabled installation fails at once, visibly', async () => {
    const admin = adminClient(h)
    const client = integrationClient()
    const { conversation } = await client.getOrCreateConversation({ channel: 'channel', tags: { id: 'chat-disabled' } })
    const configuration = { serviceUrl: outside.url, verifyToken: 'let-me-in' }
    await admin.updateBot({ id: bot.id, integrations: { outside: { integrationId, enabled: false, configuration } } } as never)
    try {
      const botClient = await runtimeClient(h, bot.id)
      const { message } = await botClient.createMessage({ conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'to nobody' }, tags: {} })
      const failed = await until(async () => {
        const m = (await botClient.getMessage({ id: message.id })).message
        return m.tags[DELIVERY_TAG] === 'failed' && m
      }, 'the message tagged failed')
      expect(failed.tags[DELIVERY_ERROR_TAG]).toMatch(/disabled/)
      expect(sentTo('chat-disabled')).toEqual([])
    } finally {
      await admin.updateBot({ id: bot.id, integrations: { outside: { integrationId, enabled: true, configuration } } } as never)
    }
  })
})

/** message_created attempts the integration did not process (refused connections), from /metrics of the instance at `baseUrl`. */
async function attemptsFailed(baseUrl: string): Promise<number> {
  return sampleValue(parsePrometheus(await (await fetch(`${baseUrl}/metrics`)).text()), 'parley_integration_delivery_attempts_failed_total') ?? 0
}

/** The bot's installed integration's id (the `outside` alias). */
async function integrationOf(store: import('../../src/store/store.js').Store, botId: string): Promise<string> {
  const found = (await store.listIntegrations(botId)).find((i) => i.name === 'outside')
  if (!found) throw new Error('no outside installation')
  return found.id
}
