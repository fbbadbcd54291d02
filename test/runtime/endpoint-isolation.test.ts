/**
 * Issue #24 item 3: one tenant's dead endpoint costs other tenants nothing (src/runtime/endpoint-slots.ts).
 *
 * The dead endpoints are loopback servers that accept every request and never answer: a stand-in for a bot or an
 * integration whose host hangs. Their requests time out only after 120 s, far beyond any wait here, so while a test
 * runs they hold whatever slots they got. The shared cap is set to 16, below what four dead endpoints would like
 * (4 × 8), so the healthy endpoint gets through only by the rules (its own slots, an idle endpoint always admitted).
 * Pass/fail is by counts (every healthy message delivered, every relay answered, the slot module's counters), never
 * by latency; the healthy requests' 20 s bound is three orders of magnitude above their normal ~10 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as chat from '@botpress/chat'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { startBotReceiver, type BotReceiver, type ReceivedRequest } from '../helpers/bot-receiver.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { parsePrometheus, sampleValue } from '../helpers/prometheus.js'
import { definitionBody } from '../helpers/sdk-integration.js'
import { loadConfig } from '../../src/config.js'
import { botEndpoint, integrationEndpoint } from '../../src/runtime/remote-bots.js'
import type { EndpointSlotSettings } from '../../src/runtime/endpoint-slots.js'
import { adminClient, allLogs, createBot, STREAM_CONFIG, Talk, sleep, uid, waitForLog, WAIT_MS, type TestBot } from './helpers.js'

const DEAD = 4
const CONVERSATIONS_PER_DEAD = 70
const HEALTHY = 20
const SLOTS: EndpointSlotSettings = { perEndpoint: 8, total: 16, queuePerEndpoint: 4, breakerFailures: 5, breakerCooldownMs: 30_000 }
const REMOTE = { ...loadConfig({}).remoteBots, timeoutMs: 120_000, budgetMs: 120_000, attempts: 1 }

/** A loopback server that accepts and never answers (a dead endpoint's stand-in): it records what arrived. */
const startDeadEndpoint = () => startBotReceiver(() => new Promise(() => {}))
/**
 * The same for an integration, which answers `register` only: updateBot waits for an installation's register (its
 * status is in the answer, #25), so an integration that hangs from the start could not be installed within the test.
 */
const startDeadIntegration = () => startBotReceiver((req) => (operation(req) === 'register' ? { status: 200, body: '{}' } : new Promise(() => {})))
const operation = (r: ReceivedRequest) => r.headers['x-bp-operation']
const textOf = (r: ReceivedRequest) => r.body?.event?.payload?.message?.payload?.text as string | undefined

describe('isolation of remote bots and integrations', () => {
  let h: Harness
  const servers: BotReceiver[] = []

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, delivery: SLOTS, botSweepMs: 300 } })
  })
  afterAll(async () => {
    // Dead endpoints first: their connections reset, the deliveries waiting on them end.
    for (const s of servers) await s.close()
    await h?.close()
  })

  async function remoteBot(receiver: BotReceiver): Promise<TestBot> {
    const bot = await createBot(h)
    await adminClient(h).updateBot({ id: bot.id, url: receiver.url })
    return bot
  }

  it(`four bots whose url never answers, ${CONVERSATIONS_PER_DEAD} conversations each: a healthy remote bot gets every message, and the dead ones hold only their own slots`, async () => {
    const dead = await Promise.all(Array.from({ length: DEAD }, startDeadEndpoint))
    const healthy = await startBotReceiver()
    servers.push(...dead, healthy)
    try {
      await deadBotsAndHealthyOne(dead, healthy)
    } finally {
      // Their requests end (connections reset): the next test starts with the shared slots free.
      for (const d of [...dead, healthy]) await d.close()
    }
  })

  async function deadBotsAndHealthyOne(dead: BotReceiver[], healthy: BotReceiver) {
    const deadBots = await Promise.all(dead.map(remoteBot))
    const fine = await remoteBot(healthy)
    for (const [i, bot] of deadBots.entries()) {
      const user = await chat.Client.connect({ apiUrl: bot.url, encryptionKey: bot.encryptionKey, userId: uid(`dead${i}`) })
      for (let c = 0; c < CONVERSATIONS_PER_DEAD; c++) {
        const { conversation } = await user.createConversation({})
        await user.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: `dead ${i}.${c}` } })
      }
    }
    const user = await chat.Client.connect({ apiUrl: fine.url, encryptionKey: fine.encryptionKey, userId: uid('fine') })
    for (let c = 0; c < HEALTHY; c++) {
      const { conversation } = await user.createConversation({})
      await user.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: `healthy ${c}` } })
    }
    await healthy.until((r) => r.filter((q) => operation(q) === 'event_received').length >= HEALTHY, 'every message of the healthy bot', WAIT_MS)
    expect(healthy.events().map(textOf).sort()).toEqual(Array.from({ length: HEALTHY }, (_, c) => `healthy ${c}`).sort())

    // The slot module's view: the dead bots hold at most their own slots (the shared cap is reached by them alone),
    // every one of their conversations holds a slot or waits in its own bot's queue (none lost, none in another's),
    // and nothing was sent to them beyond their slots.
    const slots = h.app.services.remote.slots
    const deadStats = deadBots.map((b, i) => slots.stats(botEndpoint({ id: b.id, url: dead[i]!.url })))
    for (const s of deadStats) {
      expect(s.inFlight).toBeGreaterThanOrEqual(1)
      expect(s.inFlight).toBeLessThanOrEqual(SLOTS.perEndpoint)
      // + 1: the register request sent when the url was set, hanging too.
      expect(s.inFlight + s.waiting).toBe(CONVERSATIONS_PER_DEAD + 1)
      expect(s.state).toBe('closed')
    }
    expect(deadStats.reduce((n, s) => n + s.inFlight, 0)).toBeGreaterThanOrEqual(SLOTS.total)
    expect(dead.map((d) => d.requests.length)).toEqual(deadStats.map((s) => s.inFlight))
    // The healthy bot's own slots empty out once its conversations are done (drains finish after the POSTs).
    const fineKey = botEndpoint({ id: fine.id, url: healthy.url })
    for (const deadline = Date.now() + WAIT_MS; slots.stats(fineKey).inFlight + slots.stats(fineKey).waiting > 0 && Date.now() < deadline;) await sleep(50)
    expect(slots.stats(fineKey)).toMatchObject({ inFlight: 0, waiting: 0 })
  }

  it('anonymous POSTs to four hanging integrations\' public webhook URLs: a healthy integration answers every relay, the flood is refused 429 with Retry-After', async () => {
    const admin = adminClient(h)
    async function integrationAt(receiver: BotReceiver) {
      const { integration } = await admin.createIntegration({ ...definitionBody(definition), name: uid('hang') } as never)
      await admin.updateIntegration({ id: integration.id, url: receiver.url } as never)
      const { bot } = await admin.createBot({ name: uid('relay') })
      await admin.updateBot({ id: bot.id, integrations: { outside: { integrationId: integration.id, enabled: true, configuration: { serviceUrl: 'http://127.0.0.1:9', verifyToken: 'tok-1' } } } } as never)
      const webhookUrl = (await admin.getBot({ id: bot.id })).bot.integrations.outside!.webhookUrl
      await receiver.until((r) => r.some((q) => operation(q) === 'register'), 'register')
      return { id: integration.id, url: receiver.url, webhookUrl }
    }
    const dead = await Promise.all(Array.from({ length: DEAD }, startDeadIntegration))
    const healthy = await startBotReceiver(() => ({ status: 200, body: '{"ok":true}' }))
    servers.push(...dead, healthy)
    const hanging = await Promise.all(dead.map(integrationAt))
    const fine = await integrationAt(healthy)

    const post = (url: string, signal?: AbortSignal) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}', ...(signal && { signal }) })
    const flood = new AbortController()
    const answered: Response[] = []
    const floods = hanging.flatMap((i) => Array.from({ length: CONVERSATIONS_PER_DEAD }, () => post(i.webhookUrl, flood.signal).then((r) => void answered.push(r), () => {})))
    try {
      // The flood has reached the hanging integrations (the shared cap's worth of relays).
      const relays = (d: BotReceiver) => d.requests.filter((q) => operation(q) === 'webhook_received').length
      await dead[0]!.until(() => dead.reduce((n, d) => n + relays(d), 0) >= SLOTS.total, 'the flood filling the shared slots', WAIT_MS)
      const statuses: number[] = []
      for (let n = 0; n < HEALTHY; n++) statuses.push((await post(fine.webhookUrl, AbortSignal.timeout(WAIT_MS))).status)
      expect(statuses).toEqual(Array(HEALTHY).fill(200))
      expect(healthy.requests.filter((q) => operation(q) === 'webhook_received')).toHaveLength(HEALTHY)

      // Each hanging integration: its relays hold its slots (at most its own) or wait in its own bounded queue; every
      // other relay was refused at once (429, Retry-After), none waits unbounded.
      const slots = h.app.services.remote.slots
      const held = () => hanging.map((i) => slots.stats(integrationEndpoint(i))).reduce((n, s) => n + s.inFlight + s.waiting, 0)
      for (const deadline = Date.now() + WAIT_MS; answered.length + held() < DEAD * CONVERSATIONS_PER_DEAD && Date.now() < deadline;) await sleep(50)
      expect(answered.length + held()).toBe(DEAD * CONVERSATIONS_PER_DEAD)
      expect(new Set(answered.map((r) => r.status))).toEqual(new Set([429]))
      const stats = hanging.map((i) => slots.stats(integrationEndpoint(i)))
      for (const s of stats) expect(s).toMatchObject({ waiting: SLOTS.queuePerEndpoint, state: 'closed' })
      for (const s of stats) expect(s.inFlight).toBeLessThanOrEqual(SLOTS.perEndpoint)
      expect(stats.reduce((n, s) => n + s.inFlight, 0)).toBeGreaterThanOrEqual(SLOTS.total)
      expect(dead.map(relays)).toEqual(stats.map((s) => s.inFlight))
      expect(slots.counts.refusedBusy).toBeGreaterThanOrEqual(answered.length)
      expect(answered[0]!.headers.get('retry-after')).toBe('1')
      expect(await answered[0]!.json()).toMatchObject({ code: 429, type: 'RateLimited', message: expect.stringMatching(/too many requests to it are waiting/) })
    } finally {
      flood.abort()
      await Promise.allSettled(floods)
    }
  })
})

describe('the circuit breaker of a remote bot', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({
      listen: true,
      config: { ...STREAM_CONFIG, botSweepMs: 200, remoteBots: { ...REMOTE, timeoutMs: 300, attempts: 3, backoffMs: 20, maxBackoffMs: 50 }, delivery: { ...SLOTS, breakerFailures: 2, breakerCooldownMs: 500 } },
    })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('opens after consecutive connection failures: deliveries wait (not failed, not lost), one line when it opens and one when it closes; then every message in order', async () => {
    // Connections closed before any answer (a bot that dies on each request): not processed, so retried (a timeout is final since #25).
    let hanging = true
    const receiver = await startBotReceiver((req) => (hanging && operation(req) === 'event_received' ? { drop: true } : { status: 200 }))
    try {
      const bot = await createBot(h)
      await adminClient(h).updateBot({ id: bot.id, url: receiver.url })
      const talk = await Talk.open(bot, { userId: uid('user') })
      try {
        for (const text of ['m1', 'm2', 'm3']) await talk.say(text)
        // Two failures of m1 open the circuit: its third attempt is not sent, m2 and m3 are not tried.
        const paused = await waitForLog(h, bot.id, (l) => /paused/.test(l.message))
        expect(paused.message).toMatch(/^Requests to the bot's url are paused for 0\.5 s after 2 consecutive failures/)
        expect(receiver.events().map(textOf)).toEqual(['m1', 'm1'])
        const slots = h.app.services.remote.slots
        expect(slots.counts.opened).toBe(1)
        const metrics = parsePrometheus(await (await fetch(`${h.baseUrl}/metrics`)).text())
        expect(sampleValue(metrics, 'parley_delivery_circuit_changes_total', { change: 'opened' })).toBe(1)
        hanging = false
        await receiver.until((r) => r.filter((q) => operation(q) === 'event_received').length >= 5, 'm1, m2 and m3 after the circuit closed', WAIT_MS)
        expect(receiver.events().map(textOf)).toEqual(['m1', 'm1', 'm1', 'm2', 'm3'])
        await waitForLog(h, bot.id, (l) => /resumed/.test(l.message))
        const { logs } = await allLogs(h, bot.id)
        expect(logs.filter((l) => /paused|resumed/.test(l.message)).map((l) => [l.level, l.message.slice(0, 40)]).sort())
          .toEqual([['info', "Requests to the bot's url resumed: it an"], ['warn', "Requests to the bot's url are paused for"]])
        // Deferred, not failed: no delivery failure was recorded.
        expect(logs.filter((l) => l.level === 'error')).toEqual([])
        expect(slots.stats(botEndpoint({ id: bot.id, url: receiver.url })).state).toBe('closed')
      } finally {
        await talk.close()
      }
    } finally {
      await receiver.close()
    }
  })
})

