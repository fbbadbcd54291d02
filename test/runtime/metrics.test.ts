/**
 * GET /metrics of a real Parley over HTTP: strict Prometheus text (every series with # HELP and # TYPE,
 * parsed by test/helpers/prometheus.ts) and the bot runtime's series: turns by kind and outcome, their
 * duration histogram, failures by reason (the code threw, a time budget), the queue depth (conversations
 * behind), next to the HTTP, stream, sandbox and remote-delivery series.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { eventually } from '../helpers/runtime-bot.js'
import { parsePrometheus, sampleValue, type Family } from '../helpers/prometheus.js'
import { createBot, STREAM_CONFIG, Talk, waitForLog, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    const t = event.payload.text
    if (t === 'throw') throw new Error('boom')
    if (t === 'spin') for (;;) {}
    await client.createMessage({ payload: { type: 'text', text: 'ok ' + t } })
  },
}
`

async function scrape(h: Harness): Promise<Map<string, Family>> {
  const res = await fetch(`${h.baseUrl}/metrics`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parsePrometheus(await res.text())
}

describe('the strict Prometheus parser of the tests', () => {
  it('rejects a series without # HELP, a split family and a histogram whose +Inf bucket is not its count', () => {
    expect(() => parsePrometheus('# TYPE a counter\na 1\n')).toThrow(/without a # HELP/)
    expect(() => parsePrometheus('a 1\n')).toThrow(/no # HELP/)
    expect(() => parsePrometheus('# HELP a x\n# TYPE a counter\na{k="1"} 1\n# HELP b y\n# TYPE b gauge\nb 2\na{k="2"} 1\n')).toThrow(/not together/)
    expect(() => parsePrometheus('# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 3\nh_sum 1\nh_count 4\n')).toThrow(/\+Inf/)
    expect(() => parsePrometheus('# HELP a x\n# TYPE a gauge\na{k="\\q"} 1\n')).toThrow(/bad escape/)
    expect(parsePrometheus('# HELP a x\n# TYPE a gauge\na{k="q\\"\\n"} 1.5e3\n').get('a')!.samples[0]).toEqual({ name: 'a', labels: { k: 'q"\n' }, value: 1500 })
  })
})

describe('runtime: /metrics', () => {
  let h: Harness
  let bot: TestBot
  let talk: Talk

  beforeAll(async () => {
    // The sweep never runs during the test (only at start): a code-less bot's conversation stays behind.
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, botSweepMs: 3_600_000, sandboxLimits: { budgetMs: 1000, timeoutMs: 5000, memoryBytes: 64 * 1024 * 1024 } } })
    bot = await createBot(h, CODE)
    talk = await Talk.open(bot)
  })
  afterAll(async () => {
    await talk?.close()
    await h?.close()
  })

  it('every series has # HELP and # TYPE and parses strictly; the HTTP, stream, sandbox and remote series are there', async () => {
    await fetch(`${h.baseUrl}/healthz`)
    const families = await scrape(h)
    for (const [name, type] of [
      ['parley_http_requests_total', 'counter'],
      ['parley_http_request_duration_seconds', 'histogram'],
      ['process_resident_memory_bytes', 'gauge'],
      ['parley_sse_open_streams', 'gauge'],
      ['parley_sandbox_workers', 'gauge'],
      ['parley_sandbox_workers_retired', 'counter'],
      ['parley_remote_deliveries_total', 'counter'],
      ['parley_remote_deliveries_failed_total', 'counter'],
      ['parley_remote_delivery_attempts_failed_total', 'counter'],
      ['parley_remote_deliveries_in_flight', 'gauge'],
      ['parley_integration_messages_delivered_total', 'counter'],
      ['parley_integration_messages_failed_total', 'counter'],
      ['parley_integration_delivery_attempts_failed_total', 'counter'],
      ['parley_integration_conversations_sending', 'gauge'],
      ['parley_bot_turns_total', 'counter'],
      ['parley_bot_failures_total', 'counter'],
      ['parley_bot_turn_duration_seconds', 'histogram'],
      ['parley_bot_conversations_behind', 'gauge'],
      ['parley_bot_conversations_running', 'gauge'],
      ['parley_handoffs_total', 'counter'],
      ['parley_handoff_wait_seconds', 'histogram'],
    ] as const) {
      expect(families.get(name), name).toMatchObject({ type })
      expect(families.get(name)!.help.length, name).toBeGreaterThan(10)
    }
    expect(sampleValue(families, 'parley_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBeGreaterThanOrEqual(1)
    expect(sampleValue(families, 'parley_sse_open_streams')).toBeGreaterThanOrEqual(1) // the Talk's listener
  })

  it('turns are counted by kind and outcome, timed, and failures counted by reason', async () => {
    expect(await talk.askText('hi')).toEqual(['ok hi'])
    await talk.say('throw')
    await waitForLog(h, bot.id, (l) => l.message.includes('boom'))
    await talk.say('spin')
    await waitForLog(h, bot.id, (l) => /timed out/.test(l.message))
    expect(await talk.askText('after')).toEqual(['ok after'])

    // A turn is counted when its run returns, just after its reply went out.
    const families = await eventually('the last turn counted', async () => {
      const f = await scrape(h)
      return (sampleValue(f, 'parley_bot_turns_total', { kind: 'message', outcome: 'ok' }) ?? 0) >= 2 ? f : undefined
    })
    expect(sampleValue(families, 'parley_bot_turns_total', { kind: 'message', outcome: 'failed' })).toBeGreaterThanOrEqual(2)
    expect(sampleValue(families, 'parley_bot_turns_total', { kind: 'start', outcome: 'ok' })).toBeGreaterThanOrEqual(1)
    expect(sampleValue(families, 'parley_bot_failures_total', { kind: 'message', reason: 'error' })).toBeGreaterThanOrEqual(1)
    expect(sampleValue(families, 'parley_bot_failures_total', { kind: 'message', reason: 'timeout' })).toBeGreaterThanOrEqual(1)
    expect(sampleValue(families, 'parley_bot_turn_duration_seconds_count', { kind: 'message' })).toBeGreaterThanOrEqual(4)
    // The spinning turn ran at least its 1 s budget: it is counted above the 0.5 s bucket.
    const upToHalfSecond = sampleValue(families, 'parley_bot_turn_duration_seconds_bucket', { kind: 'message', le: '0.5' })!
    expect(upToHalfSecond).toBeLessThan(sampleValue(families, 'parley_bot_turn_duration_seconds_count', { kind: 'message' })!)
  })

  it('the queue depth counts conversations whose messages their bot has not processed', async () => {
    // A bot without code: its conversations' cursors move only when the sweep (or a deploy) passes over them.
    const idle = await createBot(h)
    const user = await chat.Client.connect({ apiUrl: idle.url })
    const before = sampleValue(await scrape(h), 'parley_bot_conversations_behind')!
    const { conversation } = await user.createConversation({})
    await user.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'anyone?' } })
    expect(sampleValue(await scrape(h), 'parley_bot_conversations_behind')).toBe(before + 1)
  })
})
