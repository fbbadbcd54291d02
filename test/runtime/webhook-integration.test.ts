/**
 * The built-in `webhook` integration over real HTTP, enabled through the official admin client:
 * a JSON delivery becomes a `webhook` event (hooks, workflow triggers), signatures and their
 * timestamp window, idempotency keys, bad input, and a restart between acknowledgement and
 * processing (the first server only receives: PARLEY_WEBHOOK_WORKERS=0).
 */
import { createHmac, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signatureHeader } from '../../src/domain/webhook-service.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { testStoreKind } from '../helpers/pg.js'
import { adminClient, allLogs, createBot, newDataPlace, sleep, startOn, storedBlobCount, Talk, waitForLog, STREAM_CONFIG, type ParleyLike, type TestBot } from './helpers.js'

const CODE = String.raw`
export const actions = {
  async record(ctx) {
    console.log('FLOW ' + JSON.stringify({ trigger: ctx.event.trigger, id: ctx.event.id }))
    return {}
  },
}
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'webhook') return
    if (event.payload.body && event.payload.body.notify) {
      await client.createMessage({ conversationId: event.payload.body.notify, payload: { type: 'text', text: 'webhook says ' + event.payload.body.text } })
    }
    event.state.bot.count = (event.state.bot.count || 0) + 1
    let first = null
    if (!event.payload.bodyIncluded) first = await client.readWebhookBody({ offset: 0 })
    console.log('WEBHOOK ' + JSON.stringify({
      type: event.type, integration: event.integration, id: event.id, payload: event.payload, count: event.state.bot.count,
      first: first && { head: first.text.slice(0, 20), nextOffset: first.nextOffset, size: first.size, done: first.done },
      conversationId: event.conversationId ?? null,
    }))
  },
}
export const workflows = {
  onWebhook: {
    trigger: { type: 'event', name: 'webhook' },
    nodes: { main: { cards: [{ type: 'action', action: 'record', output: 'r' }] } },
  },
}
`

/** Enables the webhook integration of a bot through the official client; returns its webhookUrl. */
async function enableWebhook(p: ParleyLike, botId: string, configuration: Record<string, unknown> = {}): Promise<string> {
  const admin = adminClient(p)
  await admin.updateBot({ id: botId, integrations: { webhook: { enabled: true, configuration } } } as never)
  const { bot } = await admin.getBot({ id: botId })
  const webhook = bot.integrations.webhook!
  expect(webhook.webhookUrl).toBe(`${p.baseUrl}/webhooks/${webhook.webhookId}`)
  return webhook.webhookUrl
}

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
}

type Seen = { type: string; integration: string; id: string; payload: any; count: number; first: any; conversationId: string | null }
const webhookLogs = async (p: ParleyLike, botId: string): Promise<Seen[]> =>
  (await allLogs(p, botId)).logs.filter((l) => l.message.startsWith('WEBHOOK ')).map((l) => JSON.parse(l.message.slice(8)) as Seen)

describe('webhook integration', () => {
  let h: Harness
  let botId: string
  let bot: TestBot
  let url: string

  beforeAll(async () => {
    // A small inline threshold, so the "large body" path (readWebhookBody) runs with a small body here.
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 4096, toleranceSeconds: 300, workers: 2, pollMs: 200 } } })
    bot = await createBot(h, CODE)
    botId = bot.id
    url = await enableWebhook(h, botId)
  })
  afterAll(async () => {
    await h?.close()
  })

  it('lets the bot message a conversation of its chat integration from a webhook turn; state.bot persists', async () => {
    const talk = await Talk.open(bot)
    try {
      const res = await post(url, JSON.stringify({ notify: talk.conversationId, text: 'order shipped' }))
      expect(res.status).toBe(200)
      const first = (await res.json()) as { id: string }
      const [reply] = await talk.botCount(1)
      expect(reply!.payload).toEqual({ type: 'text', text: 'webhook says order shipped' })
      const log1 = await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(first.id))
      const again = (await (await post(url, '{"second":true}')).json()) as { id: string }
      const log2 = await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(again.id))
      expect(JSON.parse(log2.message.slice(8)).count).toBe(JSON.parse(log1.message.slice(8)).count + 1)
    } finally {
      await talk.close()
    }
  })

  it('answers 200 at once and runs hooks and workflows on a webhook event', async () => {
    const res = await post(url, JSON.stringify({ order: 42, items: ['a', 'é'] }))
    expect(res.status).toBe(200)
    const { id, duplicate } = (await res.json()) as { id: string; duplicate: boolean }
    expect(duplicate).toBe(false)
    const log = await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(id))
    const seen = JSON.parse(log.message.slice(8)) as Seen
    expect(seen).toMatchObject({ type: 'webhook', integration: 'webhook', id, conversationId: null, first: null })
    expect(seen.payload).toMatchObject({
      deliveryId: id, contentType: 'application/json', size: Buffer.byteLength(JSON.stringify({ order: 42, items: ['a', 'é'] })), bodyIncluded: true, body: { order: 42, items: ['a', 'é'] },
      method: 'POST', path: '', query: {}, headers: { 'content-type': 'application/json' },
    })
    const flow = await waitForLog(h, botId, (l) => l.message.startsWith('FLOW ') && l.message.includes(id))
    expect(JSON.parse(flow.message.slice(5))).toMatchObject({ id, trigger: { flowId: 'onWebhook', eventName: 'webhook', integration: 'webhook' } })
  })

  it('gives the bot Botpress\'s webhook event ({ body, query, method, headers, path }) on any method and sub-path', async () => {
    const sent = async (res: Promise<Response>) => {
      const answer = await res
      expect(answer.status).toBe(200)
      const { id } = (await answer.json()) as { id: string }
      return (JSON.parse((await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(id))).message.slice(8)) as Seen).payload
    }
    // A GET (no body: {} as Botpress gives it) on a sub-path with a query, as a verification ping would come.
    expect(await sent(fetch(`${url}/orders/42?challenge=abc&tag=a&tag=b`, { headers: { 'x-caller': 'crm', cookie: 'parley_session=secret' } }))).toMatchObject({
      method: 'GET', path: '/orders/42', query: { challenge: 'abc', tag: ['a', 'b'] }, body: {}, size: 0, bodyIncluded: true, headers: { 'x-caller': 'crm' },
    })
    // A PUT with a JSON body on the root; a DELETE on a sub-path.
    expect(await sent(fetch(`${url}?v=2`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"status":"paid"}' }))).toMatchObject({
      method: 'PUT', path: '', query: { v: '2' }, body: { status: 'paid' }, contentType: 'application/json',
    })
    const deleted = await sent(fetch(`${url}/hooks/7`, { method: 'DELETE' }))
    expect(deleted).toMatchObject({ method: 'DELETE', path: '/hooks/7', body: {} })
    // The caller's cookies never reach the bot (on Parley's origin they are Parley's own).
    expect(JSON.stringify(deleted.headers)).not.toContain('cookie')
  })

  it('gives bodies above the inline threshold as metadata, readable in chunks with client.readWebhookBody', async () => {
    const body = JSON.stringify({ big: 'x'.repeat(10_000) })
    const res = await post(url, body)
    expect(res.status).toBe(200)
    const { id } = (await res.json()) as { id: string }
    const log = await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(id))
    const seen = JSON.parse(log.message.slice(8)) as Seen
    expect(seen.payload).toMatchObject({ bodyIncluded: false, body: null, size: body.length })
    expect(seen.first).toEqual({ head: body.slice(0, 20), nextOffset: body.length, size: body.length, done: true })
  })

  it('processes a repeated idempotency key once and answers it with the same delivery id', async () => {
    const key = randomUUID()
    const body = JSON.stringify({ replay: key })
    const first = await post(url, body, { 'idempotency-key': key })
    const second = await post(url, body, { 'x-idempotency-key': key })
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    const a = (await first.json()) as { id: string; duplicate: boolean }
    const b = (await second.json()) as { id: string; duplicate: boolean }
    expect(b).toEqual({ id: a.id, duplicate: true })
    expect(a.duplicate).toBe(false)
    await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(a.id))
    // A later delivery is processed after; by then a second run of the replay would have shown up too.
    const later = (await (await post(url, '{"after":true}')).json()) as { id: string }
    await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(later.id))
    await sleep(300)
    expect((await webhookLogs(h, botId)).filter((s) => s.payload.body?.replay === key || s.id === a.id)).toHaveLength(1)
  })

  it('refuses bad input with the Botpress error body and never queues it', async () => {
    const cases: [Promise<Response>, number, string][] = [
      [post(url, '{"broken":'), 400, 'InvalidPayload'],
      [fetch(`${url}/sub`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"broken":' }), 400, 'InvalidPayload'],
      [fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' }), 415, 'UnsupportedMediaType'],
      // A body without a media type is no JSON either (read, then refused: nothing is queued).
      [fetch(url, { method: 'PUT', body: new Blob(['hi']) }), 415, 'UnsupportedMediaType'],
      [post(`${h.baseUrl}/webhooks/${randomUUID()}`, '{}'), 404, 'ResourceNotFound'],
    ]
    for (const [pending, status, type] of cases) {
      const res = await pending
      expect(res.status).toBe(status)
      expect(await res.json()).toMatchObject({ code: status, type, id: expect.any(String), message: expect.any(String) })
    }
    // The chat integration's webhook id is not a webhook endpoint, and the webhook's id is no Chat API.
    const { bot } = await adminClient(h).getBot({ id: botId })
    expect((await post(bot.integrations.chat!.webhookUrl, '{}')).status).toBe(404)
    expect((await post(`${h.baseUrl}/${url.slice(url.lastIndexOf('/') + 1)}/conversations`, '{}', { 'x-user-key': 'k' })).status).toBe(404)
    // Methods a webhook URL does not take: 405 (HEAD: a link checker queues nothing).
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(405)
    expect((await fetch(`${url}/sub`, { method: 'HEAD' })).status).toBe(405)
  })
})

describe('webhook integration: signatures', () => {
  let h: Harness
  let botId: string
  let url: string
  const secret = 'whsec-0123456789abcdef'

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024 * 1024, toleranceSeconds: 300, workers: 2, pollMs: 200 } } })
    botId = (await createBot(h, CODE)).id
    url = await enableWebhook(h, botId, { secret })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('accepts a valid signature and answers 401 to missing, wrong, stale or tampered ones', async () => {
    const body = JSON.stringify({ signed: true })
    const now = Math.floor(Date.now() / 1000)
    const hex = (t: number, b: string, key = secret) => createHmac('sha256', key).update(`${t}.${b}`).digest('hex')
    const refused: Record<string, string>[] = [
      {},
      { 'x-parley-signature': 'garbage' },
      { 'x-parley-signature': `t=${now},v1=${hex(now, body, 'another-secret-value')}` },
      // well past the 300 s tolerance: a loaded run's requests can land a second or more after \`now\`
      { 'x-parley-signature': `t=${now - 330},v1=${hex(now - 330, body)}` },
      { 'x-parley-signature': `t=${now + 330},v1=${hex(now + 330, body)}` },
      { 'x-parley-signature': `t=${now},v1=${hex(now, body.replace('true', 'false'))}` },
    ]
    for (const headers of refused) {
      const res = await post(url, body, headers)
      expect(res.status, JSON.stringify(headers)).toBe(401)
      expect(await res.json()).toMatchObject({ code: 401, type: 'Unauthorized' })
    }
    const ok = await post(url, body, { 'x-parley-signature': signatureHeader(secret, body) })
    expect(ok.status).toBe(200)
    const { id } = (await ok.json()) as { id: string }
    await waitForLog(h, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(id))
    // Every method and sub-path signs its body the same way (a GET's body is empty).
    expect((await fetch(`${url}/check`)).status).toBe(401)
    expect((await fetch(`${url}/check`, { headers: { 'x-parley-signature': signatureHeader(secret, '') } })).status).toBe(200)
    // A rotated secret: several v1 values, one of them right.
    const rotated = await post(url, body, { 'x-parley-signature': `t=${now},v1=${hex(now, body, 'old-secret-0123456789')},v1=${hex(now, body)}` })
    expect(rotated.status).toBe(200)
    await sleep(500)
    expect((await webhookLogs(h, botId)).filter((s) => s.payload.body?.signed === true)).toHaveLength(2)
    // The secret is shown to the owner (showSecrets) and can be removed with null.
    const admin = adminClient(h)
    expect((await admin.getBot({ id: botId })).bot.integrations.webhook!.configuration).toMatchObject({ secret })
    await admin.updateBot({ id: botId, integrations: { webhook: { configuration: { secret: null } } } } as never)
    expect((await post(url, body)).status).toBe(200)
  })
})

describe('webhook integration: restart', () => {
  it('processes a delivery acknowledged before a restart once the server is back', async () => {
    const place = await newDataPlace()
    try {
      const receiving = await startOn(place, { webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024 * 1024, toleranceSeconds: 300, workers: 0, pollMs: 200 } })
      const botId = (await createBot(receiving, CODE)).id
      const url = await enableWebhook(receiving, botId)
      const webhookId = url.slice(url.lastIndexOf('/') + 1)
      const res = await post(url, JSON.stringify({ survived: 'restart' }))
      expect(res.status).toBe(200)
      const { id } = (await res.json()) as { id: string }
      await sleep(500)
      expect(await webhookLogs(receiving, botId)).toEqual([])
      await receiving.stop()
      const back = await startOn(place, { webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024 * 1024, toleranceSeconds: 300, workers: 2, pollMs: 200 } })
      try {
        const log = await waitForLog(back, botId, (l) => l.message.startsWith('WEBHOOK ') && l.message.includes(id), 15_000)
        expect(JSON.parse(log.message.slice(8))).toMatchObject({ id, type: 'webhook', payload: { body: { survived: 'restart' } } })
        expect((await adminClient(back).getBot({ id: botId })).bot.integrations.webhook!.webhookId).toBe(webhookId)
      } finally {
        await back.stop()
      }
    } finally {
      await place.remove()
    }
  }, 60_000)
})

describe.runIf(testStoreKind() === 'postgres')('webhook integration: several instances on one PostgreSQL database', () => {
  it('shares the queue: deliveries received by either instance are each processed exactly once', async () => {
    const place = await newDataPlace()
    const config = { webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024 * 1024, toleranceSeconds: 300, workers: 3, pollMs: 50 } }
    const a = await startOn(place, config)
    const b = await startOn(place, config)
    try {
      const botId = (await createBot(a, CODE)).id
      const url = await enableWebhook(a, botId)
      const path = new URL(url).pathname
      const ids = await Promise.all(Array.from({ length: 24 }, async (_, i) => {
        const res = await post(`${(i % 2 === 0 ? a : b).baseUrl}${path}`, JSON.stringify({ n: i }))
        expect(res.status).toBe(200)
        return ((await res.json()) as { id: string }).id
      }))
      for (let i = 0; i < 200 && (await webhookLogs(a, botId)).length < ids.length; i++) await sleep(100)
      await sleep(500)
      const seen = (await webhookLogs(a, botId)).map((s) => s.id)
      expect(seen.sort()).toEqual([...ids].sort())
    } finally {
      await b.stop()
      await a.stop()
      await place.remove()
    }
  }, 90_000)
})

describe('webhook integration: bot deletion', () => {
  it('removes the queued deliveries and their bodies with the bot', async () => {
    const place = await newDataPlace()
    const p = await startOn(place, { webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024 * 1024, toleranceSeconds: 300, workers: 0, pollMs: 200 } })
    try {
      const botId = (await createBot(p, CODE)).id
      const url = await enableWebhook(p, botId)
      for (const n of [1, 2]) expect((await post(url, JSON.stringify({ n }))).status).toBe(200)
      // The bodies are in the configured blob store (the database on PostgreSQL, else the data directory).
      expect(await storedBlobCount(place)).toBe(2)
      await adminClient(p).deleteBot({ id: botId })
      expect(await storedBlobCount(place)).toBe(0)
      expect((await post(url, '{}')).status).toBe(404)
    } finally {
      await p.stop()
      await place.remove()
    }
  })
})

describe('webhook integration: a body larger than the sandbox memory', () => {
  it('fails only the turn of a bot that blows up on it; the next delivery is processed', async () => {
    const h = await startParley({
      listen: true,
      config: {
        ...STREAM_CONFIG,
        sandboxLimits: { budgetMs: 10_000, timeoutMs: 30_000, memoryBytes: 16 * 1024 * 1024 },
        webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024, toleranceSeconds: 300, workers: 1, pollMs: 200 },
      },
    })
    try {
      const greedy = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'webhook') return
    if (event.payload.bodyIncluded) { console.log('SMALL ' + event.id); return }
    let text = '', part
    do { part = await client.readWebhookBody(); text += part.text } while (!part.done)
    const chars = text.split('') // one value per byte: far beyond the sandbox's memory
    console.log('READ ALL ' + chars.length)
  },
}
`
      const botId = (await createBot(h, greedy)).id
      const url = await enableWebhook(h, botId)
      const big = Buffer.alloc(24 * 1024 * 1024, 'x')
      big.write('{"d":"', 0)
      big.write('"}', big.length - 2)
      expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big })).status).toBe(200)
      const small = (await (await post(url, '{"ok":1}')).json()) as { id: string }
      const failure = await waitForLog(h, botId, (l) => l.level === 'error', 60_000)
      expect(failure.message).toMatch(/out of memory/)
      await waitForLog(h, botId, (l) => l.message === `SMALL ${small.id}`, 30_000)
      expect((await allLogs(h, botId)).logs.some((l) => l.message.startsWith('READ ALL'))).toBe(false)
    } finally {
      await h.close()
    }
  }, 90_000)
})
