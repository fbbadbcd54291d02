/**
 * Issue #24 item 4, the readable answers: a developer sets a bot's or an integration's url to an internal service
 * (here a plain node:http server on loopback, standing in for one: loopback is allowed by default) whose answers
 * carry a secret. Whatever it answers, the secret never comes back through callAction's error, getBotLogs (readable
 * by viewers), getIntegrationLogs, pingBotIntegration, a delivery failure; and with the target refused by the
 * outbound policy, not through the public integration webhook either (that relay is the integration's answer by
 * design: what keeps it from being an internal one is the policy).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { adminClient as rawAdmin } from '../helpers/admin-client.js'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { adminClient, allLogs, createBot, STREAM_CONFIG, Talk, uid, waitForLog } from '../runtime/helpers.js'

const SECRET = 'internal-secret-4c1d9e'
const REMOTE = { timeoutMs: 2_000, budgetMs: 2_000, attempts: 1, backoffMs: 10, maxBackoffMs: 10 }
const OBJECT = { schema: { type: 'object' } }

/** An integration definition with one action and one channel, served at `url`, installed as `alias` on a new bot. */
async function installedIntegration(h: Harness, url: string, alias: string) {
  const admin = adminClient(h)
  const { integration } = await admin.createIntegration({
    name: uid('internal'), version: '1.0.0', url,
    actions: { peek: { input: OBJECT, output: OBJECT } },
    channels: { dm: { messages: { text: { schema: { type: 'object', properties: { text: { type: 'string' } } } } } } },
  } as never)
  const bot = await createBot(h)
  await admin.updateBot({ id: bot.id, integrations: { [alias]: { integrationId: integration.id, enabled: true } } } as never)
  const webhookUrl = (await admin.getBot({ id: bot.id })).bot.integrations[alias]!.webhookUrl
  return { integrationId: integration.id, bot, webhookUrl }
}

const integrationLogs = async (h: Harness, id: string) =>
  (await adminClient(h).getIntegrationLogs({ id, timeStart: new Date(0).toISOString() })).logs

describe('outbound: an internal answer is never echoed', () => {
  let h: Harness
  let internal: BotReceiver

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    // Every answer of this "internal service" is an error whose body is the secret.
    internal = await startBotReceiver(() => ({ status: 500, body: JSON.stringify({ message: SECRET, detail: SECRET }) }))
  })
  afterAll(async () => {
    await internal?.close()
    await h?.close()
  })

  it('a remote bot\'s url: callAction, register and delivery failures tell the status only', async () => {
    const bot = await createBot(h)
    await adminClient(h).updateBot({ id: bot.id, url: internal.url })
    const err = await failure((await runtimeClient(h, bot.id)).callAction({ type: 'peek', input: {} }))
    expect(err).toMatchObject({ code: 400, type: 'Runtime' })
    expect(err.message).not.toContain(SECRET)
    expect(err.message).toMatch(/answered 500/)
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      const sent = await talk.say('hello')
      await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes(sent.id))
    } finally {
      await talk.close()
    }
    const { logs } = await allLogs(h, bot.id)
    expect(logs.some((l) => /register: .* answered 500$/.test(l.message))).toBe(true)
    expect(logs.some((l) => /failed after 1 attempt\(s\): answered 500$/.test(l.message))).toBe(true)
    expect(JSON.stringify(logs)).not.toContain(SECRET)
  })

  it('an integration\'s url: callAction, ping, register, outgoing delivery and webhook failures tell the status only', async () => {
    const { integrationId, bot, webhookUrl } = await installedIntegration(h, internal.url, 'inside')
    // The webhook relays the integration's answer to its caller (what it is for: with the target allowed, that is the
    // relay's job); the line in the integration's logs has the status only.
    expect((await fetch(webhookUrl, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(500)
    const botClient = await runtimeClient(h, bot.id)
    const err = await failure(botClient.callAction({ type: 'inside:peek', input: {} }))
    expect(err).toMatchObject({ code: 400, type: 'Runtime' })
    expect(err.message).not.toContain(SECRET)
    expect(err.message).toMatch(/answered 500/)
    const ping = await rawAdmin(h)('POST', `/bots/${bot.id}/integrations/inside/ping`)
    expect(ping.status).toBe(200)
    expect(ping.body).toMatchObject({ ok: false, status: 500, message: 'The integration answered 500' })
    // A bot message in one of the installation's conversations: delivered as message_created, refused with 500.
    const { conversation } = await botClient.createConversation({ integrationName: 'inside', channel: 'dm', tags: {} })
    const { message } = await botClient.createMessage({ conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'out' }, tags: {} })
    await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes(message.id))
    const { logs } = await allLogs(h, bot.id)
    expect(logs.find((l) => l.message.includes(message.id))?.message).toMatch(/answered 500$/)
    expect(JSON.stringify(logs)).not.toContain(SECRET)
    const own = await integrationLogs(h, integrationId)
    expect(own.some((l) => /register .*answered 500$/.test(l.message))).toBe(true)
    expect(own.some((l) => /webhook_received \(POST \/\): answered 500$/.test(l.message))).toBe(true)
    expect(JSON.stringify(own)).not.toContain(SECRET)
    const tagged = await botClient.getMessage({ id: message.id })
    expect(JSON.stringify(tagged.message.tags)).not.toContain(SECRET)
  })
})

describe('outbound: a refused target is never reached, so nothing of it is relayed', () => {
  let h: Harness
  let internal: BotReceiver

  beforeAll(async () => {
    // Loopback denied by the setting: `localhost` passes when the url is set (a name) and is refused at connect time.
    const { outbound } = loadConfig({ PARLEY_OUTBOUND_DENY: 'loopback' })
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, outbound } })
    internal = await startBotReceiver(() => ({ status: 200, body: JSON.stringify({ output: { secret: SECRET }, message: SECRET }) }))
  })
  afterAll(async () => {
    await internal?.close()
    await h?.close()
  })

  it('the public integration webhook answers a short refusal, the internal service gets nothing', async () => {
    const { integrationId, bot, webhookUrl } = await installedIntegration(h, `http://localhost:${internal.port}/`, 'inside')
    const res = await fetch(`${webhookUrl}/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    const text = await res.text()
    expect(res.status).toBe(400)
    expect(JSON.parse(text)).toMatchObject({ type: 'Runtime', message: 'The integration did not answer: address not allowed by the outbound policy' })
    const err = await failure((await runtimeClient(h, bot.id)).callAction({ type: 'inside:peek', input: {} }))
    expect(err).toMatchObject({ code: 400, type: 'Runtime', message: 'The integration did not answer action "inside:peek": address not allowed by the outbound policy' })
    expect(internal.requests).toEqual([])
    const own = await integrationLogs(h, integrationId)
    expect(own.some((l) => l.message.endsWith('could not be reached: address not allowed by the outbound policy'))).toBe(true)
    expect(JSON.stringify(own)).not.toContain(SECRET)
  })
})
