/**
 * Issue #24 item 4, the targets: where a remote bot's or an integration's url may point (the outbound policy,
 * PARLEY_OUTBOUND_DENY / PARLEY_OUTBOUND_ALLOW). Checked when the url is set (a clear 400 for an IP literal in a
 * denied range, in any of its forms) and on the address connected to (a name resolving to a denied address, an IP
 * literal stored before the policy changed), before anything is sent; pingBotIntegration then says the same for an
 * open port and a closed one. Loopback is allowed by default; the setting's ALLOW overrides its DENY.
 * The servers here are plain node:http servers on loopback (test/helpers/bot-receiver.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { adminClient as rawAdmin, expectError } from '../helpers/admin-client.js'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { freePort, restartParley, startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { adminClient, createBot, STREAM_CONFIG, Talk, uid, waitForLog } from '../runtime/helpers.js'

const REMOTE = { timeoutMs: 2_000, budgetMs: 2_000, attempts: 1, backoffMs: 10, maxBackoffMs: 10 }
const REFUSED = 'address not allowed by the outbound policy'
/** 169.254.169.254, the cloud metadata address, in the forms a URL parser reads. */
const METADATA_FORMS = ['169.254.169.254', '2852039166', '0xa9fea9fe', '0251.0376.0251.0376', '169.254.43518', '[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]']

/** updateBot and updateIntegration with `url`: the status of each (raw Admin API requests). */
async function setUrl(h: Harness, botId: string, integrationId: string, url: string) {
  const admin = rawAdmin(h)
  return [await admin('PUT', `/bots/${botId}`, { body: { url } }), await admin('PUT', `/integrations/${integrationId}`, { body: { url } })]
}

async function newIntegration(h: Harness, url: string | null = null): Promise<string> {
  const { integration } = await adminClient(h).createIntegration({ name: uid('target'), version: '1.0.0', ...(url !== null && { url }) } as never)
  return integration.id
}

describe('outbound targets: the built-in policy', () => {
  let h: Harness
  let server: BotReceiver

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    server = await startBotReceiver()
  })
  afterAll(async () => {
    await server?.close()
    await h?.close()
  })

  it('the metadata address in every form, link-local, 0.0.0.0, multicast: 400 when the url is set', async () => {
    const bot = await createBot(h)
    const integrationId = await newIntegration(h)
    for (const host of [...METADATA_FORMS, '169.254.0.1', '[fe80::1]', '0.0.0.0', '0', '224.0.0.1', '[fd00:ec2::254]']) {
      for (const res of await setUrl(h, bot.id, integrationId, `http://${host}:8080/latest/meta-data/`)) {
        expectError(res, 400, 'InvalidPayload')
        expect(res.body.message, host).toMatch(/is not allowed by this server's outbound policy/)
      }
    }
    const created = await rawAdmin(h)('POST', '/integrations', { body: { name: uid('meta'), version: '1.0.0', url: 'http://0xa9fea9fe/' } })
    expectError(created, 400, 'InvalidPayload')
    expect((await rawAdmin(h)('POST', '/bots', { body: { name: uid('meta'), url: 'http://[::ffff:169.254.169.254]/' } })).status).toBe(400)
  })

  it('loopback is allowed by default, in its decimal and hex forms too (bots served on the same machine)', async () => {
    const bot = await createBot(h)
    const integrationId = await newIntegration(h)
    for (const host of ['2130706433', '0x7f000001', '127.1']) {
      for (const res of await setUrl(h, bot.id, integrationId, `http://${host}:${server.port}/`)) {
        expect(res.status, host).toBe(200)
        // Stored as the URL parser reads it.
        expect((res.body.bot ?? res.body.integration).url).toBe(server.url)
      }
    }
    // The url was set: the bot is registered there.
    await server.until((r) => r.some((q) => q.headers['x-bp-operation'] === 'register'), 'the register request')
  })

  it('a redirect is not followed, to a denied address or any other: the answer is the 3xx, the place it points to gets nothing', async () => {
    const elsewhere = await startBotReceiver()
    const redirecting = await startBotReceiver((req) => ({
      status: 307, headers: { location: req.headers['x-bp-operation'] === 'register' ? 'http://169.254.169.254/latest/meta-data/' : elsewhere.url },
    }))
    try {
      const bot = await createBot(h)
      await adminClient(h).updateBot({ id: bot.id, url: redirecting.url })
      await waitForLog(h, bot.id, (l) => l.message === `register: ${redirecting.url} failed after 1 attempt(s): answered 307`)
      const err = await failure((await runtimeClient(h, bot.id)).callAction({ type: 'peek', input: {} }))
      expect(err.message).toBe('Action "peek" failed in the bot (it answered 307)')
      expect(redirecting.requests.length).toBe(2)
      expect(elsewhere.requests).toEqual([])
    } finally {
      await elsewhere.close()
      await redirecting.close()
    }
  })
})

describe('outbound targets: PARLEY_OUTBOUND_DENY=loopback,private', () => {
  let h: Harness
  let server: BotReceiver

  beforeAll(async () => {
    const { outbound } = loadConfig({ PARLEY_OUTBOUND_DENY: 'loopback,private' })
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, outbound } })
    server = await startBotReceiver()
  })
  afterAll(async () => {
    await server?.close()
    await h?.close()
  })

  it('loopback, private and ULA literals in every form: 400 when the url is set', async () => {
    const bot = await createBot(h)
    const integrationId = await newIntegration(h)
    for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '10.0.0.1', '172.16.0.1', '192.168.1.1', '[fd00::]', '[fd00::1]']) {
      for (const res of await setUrl(h, bot.id, integrationId, `http://${host}:${server.port}/`)) {
        expectError(res, 400, 'InvalidPayload')
      }
    }
    expect(server.requests).toEqual([])
  })

  it('a name resolving to a denied address (localhost) is refused at connect time: register, events, callAction', async () => {
    const bot = await createBot(h)
    await adminClient(h).updateBot({ id: bot.id, url: `http://localhost:${server.port}/` })
    await waitForLog(h, bot.id, (l) => l.message === `register: http://localhost:${server.port}/ failed after 1 attempt(s): ${REFUSED}`)
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      const sent = await talk.say('hello')
      const line = await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes(sent.id))
      expect(line.message).toMatch(new RegExp(`failed after 1 attempt\\(s\\): ${REFUSED}$`))
    } finally {
      await talk.close()
    }
    const err = await failure((await runtimeClient(h, bot.id)).callAction({ type: 'peek', input: {} }))
    expect(err).toMatchObject({ code: 400, type: 'Runtime', message: `The bot at its url did not answer action "peek": ${REFUSED}` })
    expect(server.requests).toEqual([])
  })

  it('pingBotIntegration says the same for an open port and a closed one when the target is refused', async () => {
    const closed = await freePort()
    const pings: unknown[] = []
    for (const port of [server.port, closed]) {
      const integrationId = await newIntegration(h, `http://localhost:${port}/`)
      const bot = await createBot(h)
      await adminClient(h).updateBot({ id: bot.id, integrations: { probe: { integrationId, enabled: true } } } as never)
      const res = await rawAdmin(h)('POST', `/bots/${bot.id}/integrations/probe/ping`)
      expect(res.status).toBe(200)
      const { latencyMs: _latency, ...rest } = res.body as { latencyMs: number; message: string }
      pings.push({ ...rest, message: rest.message.replace(String(port), 'PORT') })
    }
    expect(pings[0]).toEqual({ ok: false, message: `http://localhost:PORT/ could not be reached: ${REFUSED}` })
    expect(pings[1]).toEqual(pings[0])
    expect(server.requests).toEqual([])
  })
})

describe('outbound targets: ALLOW overrides DENY, and a stored literal is checked at connect time', () => {
  let h: Harness
  let server: BotReceiver

  beforeAll(async () => {
    const { outbound } = loadConfig({ PARLEY_OUTBOUND_DENY: '127.0.0.0/8', PARLEY_OUTBOUND_ALLOW: '127.0.0.1' })
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, outbound } })
    server = await startBotReceiver()
  })
  afterAll(async () => {
    await server?.close()
    await h?.close()
  })

  it('127.0.0.1 allowed by ALLOW inside a denied 127/8; 127.0.0.2 still refused; after a restart that denies it, the stored url is refused before connecting', async () => {
    const bot = await createBot(h)
    const integrationId = await newIntegration(h)
    for (const res of await setUrl(h, bot.id, integrationId, `http://127.0.0.2:${server.port}/`)) expectError(res, 400, 'InvalidPayload')
    for (const res of await setUrl(h, bot.id, integrationId, server.url)) expect(res.status).toBe(200)
    await server.until((r) => r.some((q) => q.headers['x-bp-operation'] === 'register'), 'the register request')
    const before = server.requests.length
    // The same data, restarted with loopback denied: the url set before is refused when Parley connects.
    h = await restartParley(h, { config: { outbound: loadConfig({ PARLEY_OUTBOUND_DENY: 'loopback' }).outbound } })
    const err = await failure((await runtimeClient(h, bot.id)).callAction({ type: 'peek', input: {} }))
    expect(err).toMatchObject({ code: 400, message: `The bot at its url did not answer action "peek": ${REFUSED}` })
    expect(server.requests.length).toBe(before)
  })
})
