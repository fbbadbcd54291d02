/**
 * Issue #25 item 2, delivery semantics (src/runtime/delivery-policy.ts; docs/sdk-bots.md "Delivery semantics"), with an
 * unchanged @botpress/sdk bot (test/fixtures/sdk-bots/delivery-bot.mjs) behind a counting proxy (test/helpers/front-proxy.ts,
 * the stand-in for a load balancer) and an unchanged SDK integration (outside-chat.mjs). The call timeout
 * (PARLEY_REMOTE_BOT_TIMEOUT_MS, 200 ms here) is shorter than the slow handler: before, an event was re-sent when it
 * ran out. Pass/fail by counts: POSTs received, handler runs, replies, log lines, quality records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { botEndpoint } from '../../src/runtime/remote-bots.js'
import { startFrontProxy, type FrontProxy } from '../helpers/front-proxy.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { parsePrometheus, sampleValue } from '../helpers/prometheus.js'
import { deploySdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { adminClient, allLogs, qualityTotals, STREAM_CONFIG, Talk, textOf, uid, waitForLog, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 200, budgetMs: 20_000, attempts: 20, backoffMs: 50, maxBackoffMs: 2_000 }
/** A paused bot is probed again soon (connections refused twice open its breaker). */
const SLOTS = { ...loadConfig({}).delivery, breakerFailures: 2, breakerCooldownMs: 300 }
const today = () => new Date().toISOString().slice(0, 10)

describe('delivery semantics: an @botpress/sdk bot', () => {
  let h: Harness
  let program: SdkBot
  let proxy: FrontProxy
  let bot: TestBot
  let talk: Talk
  const startDate = today()

  /** Handler runs of the bot for a message (its stdout). */
  const handled = (id: string) => program.output().split('\n').filter((l) => l === `handling ${id}`).length
  /** event_received POSTs the proxy received for a message. */
  const posts = (id: string) => proxy.posts.filter((p) => p.operation === 'event_received' && p.body.includes(id)).length
  const replies = (text: string) => talk.messages.filter((m) => textOf(m) === text).length
  /** Says `text`, then a marker after it: once the marker's echo is here, the first one's delivery is over (one conversation, in order). */
  async function sayAndSettle(text: string) {
    const message = await talk.say(text)
    const marker = uid('after')
    await talk.say(marker)
    await talk.until(() => replies(`echo: ${marker}`) === 1, `the echo of ${marker}`)
    return message
  }

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, delivery: SLOTS, botSweepMs: 200 } })
    ;({ bot, program } = await deploySdkBot(h, 'delivery-bot.mjs', {}, { STEP_MS: '100' }))
    proxy = await startFrontProxy(program.url)
    await adminClient(h).updateBot({ id: bot.id, url: proxy.url })
    talk = await Talk.open(bot, { userId: uid('user') })
  })
  afterAll(async () => {
    await talk?.close()
    await program?.stop()
    await proxy?.close()
    await h?.close()
  })

  it('a slow handler (longer than the call timeout) sending 5 messages: one delivery, exactly 5 messages, the breaker closed', async () => {
    const loop = await sayAndSettle('loop 5')
    expect([posts(loop.id), handled(loop.id)]).toEqual([1, 1])
    expect(talk.messages.filter((m) => /^Message \d$/.test(textOf(m))).map(textOf)).toEqual(['Message 0', 'Message 1', 'Message 2', 'Message 3', 'Message 4'])
    expect(h.app.services.remote.slots.stats(botEndpoint({ id: bot.id, url: proxy.url })).state).toBe('closed')
    expect(h.app.services.remote.slots.counts.opened).toBe(0)
  })

  it('a handler that replies then throws: the reply once, the failure with its message in getBotLogs and quality analytics', async () => {
    const failing = await sayAndSettle('fail finishing')
    expect([posts(failing.id), handled(failing.id), replies('An error occured while finishing')]).toEqual([1, 1, 1])
    const line = await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes(failing.id))
    expect(line.message).toMatch(/failed after 1 attempt\(s\): answered 400 \(Runtime: could not finishing\)$/)
    expect(line.conversationId).toBe(talk.conversationId)
    expect(await qualityTotals(h, bot.id, startDate)).toEqual({ failedTurns: 1, timedOutTurns: 0 })
  })

  it('a 503 from the proxy, then the bot: sent again once, handled once', async () => {
    proxy.refuse('event_received', 503)
    const message = await sayAndSettle('after a 503')
    expect([posts(message.id), handled(message.id), replies('echo: after a 503')]).toEqual([2, 1, 1])
  })

  it('a 429 with Retry-After: sent again after it, handled once', async () => {
    proxy.refuse('event_received', 429, { 'retry-after': '1' })
    const message = await sayAndSettle('after a 429')
    expect([posts(message.id), handled(message.id), replies('echo: after a 429')]).toEqual([2, 1, 1])
  })

  it('connection refused (the bot down, no proxy), then up: delivered once', async () => {
    await adminClient(h).updateBot({ id: bot.id, url: program.url })
    const failedAttempts = async () => sampleValue(parsePrometheus(await (await fetch(`${h.baseUrl}/metrics`)).text()), 'parley_remote_delivery_attempts_failed_total') ?? 0
    const before = await failedAttempts()
    await program.stop()
    const message = await talk.say('while down')
    for (let i = 0; (await failedAttempts()) === before; i++) {
      if (i > 400) throw new Error('no refused attempt')
      await new Promise((r) => setTimeout(r, 25))
    }
    await program.start()
    await talk.until(() => replies('echo: while down') === 1, 'the echo after the restart')
    const settled = await sayAndSettle('once more')
    expect([handled(message.id), replies('echo: while down'), handled(settled.id)]).toEqual([1, 1, 1])
    // Nothing failed but the throwing handler.
    expect((await allLogs(h, bot.id)).logs.filter((l) => l.level === 'error')).toHaveLength(1)
  })
})
