/**
 * Remote bots, the faults: a bot answering 503 (a proxy in front of it), hanging past the delivery budget, dying
 * before answering, answering an error, down and restarted, and Parley itself restarted with deliveries pending.
 * Every event is delivered or logged as failed, none is delivered again once the bot's code answered (2xx or an
 * error: final), the order of a conversation is kept, and a bot that is down does not hold up another bot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBotReceiver, type BotReceiver, type ReceivedRequest } from '../helpers/bot-receiver.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { loadConfig } from '../../src/config.js'
import { adminClient, allLogs, createBot, newDataPlace, qualityTotals, startOn, STREAM_CONFIG, Talk, uid, waitForLog, chatUrl } from './helpers.js'

const REMOTE = { timeoutMs: 400, budgetMs: 1_000, attempts: 4, backoffMs: 50, maxBackoffMs: 200 }
/** Slots per bot (src/runtime/endpoint-slots.ts); the breaker off: these faults are about retries and order. */
const SLOTS = { ...loadConfig({}).delivery, perEndpoint: 4, total: 16, breakerFailures: 0 }

const textOf = (r: ReceivedRequest) => r.body?.event?.payload?.message?.payload?.text as string | undefined

/**
 * Records, per event id, the statuses this receiver answered: a 2xx must be the last delivery of an
 * event (at-least-once until acknowledged, then never again).
 */
function acknowledged(receiver: BotReceiver) {
  const answered = new Map<string, number[]>()
  const inner = receiver.answer
  receiver.answer = async (req) => {
    const a = await inner(req)
    const id = req.body?.event?.id as string | undefined
    if (id && !a.drop && !(a.delayMs && a.delayMs >= REMOTE.timeoutMs)) answered.set(id, [...(answered.get(id) ?? []), a.status ?? 200])
    else if (id) answered.set(id, [...(answered.get(id) ?? []), 0])
    return a
  }
  return {
    /** Event ids delivered again after a 2xx answer. */
    redelivered: () => [...answered].filter(([, statuses]) => statuses.slice(0, -1).some((s) => s >= 200 && s < 300)).map(([id]) => id),
  }
}

describe('remote bots: faults', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, delivery: SLOTS } })
  })
  afterAll(async () => {
    await h?.close()
  })

  async function remoteBot(receiver: BotReceiver) {
    const bot = await createBot(h)
    await adminClient(h).updateBot({ id: bot.id, url: receiver.url })
    return bot
  }

  it('503s and a dropped connection are retried, an error answer and a hang past the budget are not; the order is kept and nothing answered comes twice', async () => {
    const seen = new Map<string, number>()
    const receiver = await startBotReceiver((req) => {
      if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 }
      const text = textOf(req)!
      const n = (seen.get(text) ?? 0) + 1
      seen.set(text, n)
      if (text === 'fails twice' && n <= 2) return { status: 503, body: '{"message":"boom"}' }
      if (text === 'throws once' && n === 1) return { status: 500, body: '{"message":"boom"}' }
      if (text === 'hangs once' && n === 1) return { delayMs: REMOTE.budgetMs + 300 }
      if (text === 'dies once' && n === 1) return { drop: true }
      return { status: 200 }
    })
    const acks = acknowledged(receiver)
    try {
      const bot = await remoteBot(receiver)
      const talk = await Talk.open(bot, { userId: uid('user') })
      try {
        const said: { id: string }[] = []
        for (const text of ['first', 'fails twice', 'throws once', 'hangs once', 'dies once', 'last']) said.push(await talk.say(text))
        await receiver.until((r) => r.some((q) => textOf(q) === 'last'), 'the last message')
        const order = receiver.events().map(textOf)
        expect(order).toEqual(['first', 'fails twice', 'fails twice', 'fails twice', 'throws once', 'hangs once', 'dies once', 'dies once', 'last'])
        expect(receiver.events().filter((q) => textOf(q) === 'fails twice').map((q) => q.headers['x-parley-attempt'])).toEqual(['1', '2', '3'])
        // Every attempt is the same event (same id) for the bot to dedupe.
        expect(new Set(receiver.events().filter((q) => textOf(q) === 'fails twice').map((q) => q.body.event.id)).size).toBe(1)
        expect(acks.redelivered()).toEqual([])
        // The error answer and the hang are final, each one line; the retried ones delivered in the end.
        const errors = (await allLogs(h, bot.id)).logs.filter((l) => l.level === 'error').map((l) => l.message)
        expect(errors.map((m) => said.findIndex((s) => m.includes(s.id)))).toEqual(expect.arrayContaining([2, 3]))
        expect(errors).toHaveLength(2)
      } finally {
        await talk.close()
      }
    } finally {
      await receiver.close()
    }
  })

  it('an event refused on every attempt is logged as failed (its status) and the conversation moves on; the dashboard counts it (and one never answered in time as timed out)', async () => {
    const receiver = await startBotReceiver((req) => (textOf(req) === 'poison' ? { status: 503, body: '{"message":"not today"}' }
      : textOf(req) === 'too slow' ? { delayMs: REMOTE.budgetMs + 300 } : { status: 200 }))
    try {
      const bot = await remoteBot(receiver)
      const talk = await Talk.open(bot, { userId: uid('user') })
      try {
        const startDate = new Date().toISOString().slice(0, 10)
        const poison = await talk.say('poison')
        await talk.say('too slow')
        await talk.say('after')
        await receiver.until((r) => r.some((q) => textOf(q) === 'after'), 'the next message')
        expect(receiver.events().filter((q) => textOf(q) === 'poison')).toHaveLength(REMOTE.attempts)
        const log = await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes(poison.id))
        expect(log.message).toMatch(/after 4 attempt\(s\): answered 503$/)
        // The status only: the answer's body is the target's, never in a line viewers read (#24).
        expect(log.message).not.toMatch(/not today/)
        expect(log.conversationId).toBe(talk.conversationId)
        // Never processed: 503 on every attempt (a status alone: an error of the bot's code would be final).
        // getBotQualityAnalytics: the refused one failed, the one never answered in time timed out (turns run in order:
        // both were recorded before 'after' was delivered).
        expect(await qualityTotals(h, bot.id, startDate)).toEqual({ failedTurns: 1, timedOutTurns: 1 })
      } finally {
        await talk.close()
      }
    } finally {
      await receiver.close()
    }
  })

  it('a bot down, then restarted at the same url, gets every event once, in order', async () => {
    const first = await startBotReceiver()
    const port = first.port
    const bot = await remoteBot(first)
    await first.until((r) => r.some((q) => q.headers['x-bp-operation'] === 'register'), 'register')
    await first.close()
    const talk = await Talk.open(bot, { userId: uid('user') })
    let second: BotReceiver | undefined
    try {
      for (const text of ['m1', 'm2', 'm3']) await talk.say(text)
      // Down for a while (connections refused: retries with backoff), then back.
      await new Promise((r) => setTimeout(r, 120))
      second = await startBotReceiver(() => ({ status: 200 }), port)
      await second.until((r) => r.filter((q) => q.headers['x-bp-operation'] === 'event_received').length >= 3, 'three events')
      await new Promise((r) => setTimeout(r, 200)) // a duplicate would arrive right behind
      expect(second.events().map(textOf)).toEqual(['m1', 'm2', 'm3'])
    } finally {
      await talk.close()
      await second?.close()
    }
  })

  it('a bot that never answers does not hold up another bot', async () => {
    let releaseStuck!: () => void
    const stuckGate = new Promise<void>((resolve) => (releaseStuck = resolve))
    const stuck = await startBotReceiver(async (req) => {
      if (req.headers['x-bp-operation'] === 'event_received') await stuckGate
      return { status: 200 }
    })
    const healthy = await startBotReceiver()
    try {
      const slow = await remoteBot(stuck)
      const fine = await remoteBot(healthy)
      const slowTalks = await Promise.all([0, 1, 2, 3, 4, 5].map(() => Talk.open(slow, { userId: uid('s') })))
      const fineTalks = await Promise.all([0, 1, 2].map(() => Talk.open(fine, { userId: uid('f') })))
      try {
        for (const t of slowTalks) await t.say('to the stuck bot')
        for (const t of fineTalks) await t.say('to the healthy bot')
        // All of the healthy bot's events arrive while the stuck bot has acknowledged none of its own.
        await healthy.until((r) => r.filter((q) => q.headers['x-bp-operation'] === 'event_received').length >= 3, 'the healthy bot\'s events')
        expect(stuck.events().length).toBeLessThanOrEqual(SLOTS.perEndpoint * REMOTE.attempts)
        // The stuck bot holds at most its own slots at a time (bounded per bot).
        const inFlightAtOnce = stuck.events().filter((q) => q.headers['x-parley-attempt'] === '1').length
        expect(inFlightAtOnce).toBeLessThanOrEqual(SLOTS.perEndpoint)
      } finally {
        releaseStuck()
        await Promise.all([...slowTalks, ...fineTalks].map((t) => t.close()))
      }
    } finally {
      releaseStuck()
      await stuck.close()
      await healthy.close()
    }
  })
})

describe('remote bots: Parley restarted with deliveries pending', () => {
  it('delivers them after the restart, in order', async () => {
    const place = await newDataPlace()
    const config = { remoteBots: { ...REMOTE, budgetMs: 60_000, attempts: 50, backoffMs: 100, maxBackoffMs: 100 }, delivery: SLOTS }
    let parley = await startOn(place, config)
    // The bot's url answers nothing yet: deliveries stay pending.
    const down = await startBotReceiver(() => ({ status: 503 }))
    const port = down.port
    let receiver: BotReceiver | undefined
    try {
      const admin = adminClient(parley)
      const { bot } = await admin.createBot({ name: uid('restart') })
      await admin.updateBot({ id: bot.id, url: down.url })
      const full = (await admin.getBot({ id: bot.id })).bot
      const webhookId = full.integrations.chat!.webhookId
      const encryptionKey = full.integrations.chat!.configuration.encryptionKey as string
      const talk = await Talk.open({ url: chatUrl(parley, { webhookId }), encryptionKey }, { userId: uid('user') })
      for (const text of ['before-1', 'before-2', 'before-3']) await talk.say(text)
      await down.until((r) => r.some((q) => textOf(q) === 'before-1'), 'a first attempt')
      await talk.close()
      await parley.stop()
      await down.close()
      receiver = await startBotReceiver(() => ({ status: 200 }), port)
      parley = await startOn(place, config)
      await receiver.until((r) => r.filter((q) => q.headers['x-bp-operation'] === 'event_received').length >= 3, 'the pending events')
      await new Promise((r) => setTimeout(r, 200))
      expect(receiver.events().map(textOf)).toEqual(['before-1', 'before-2', 'before-3'])
    } finally {
      await parley.stop()
      await down.close().catch(() => {})
      await receiver?.close()
      await place.remove()
    }
  })
})
