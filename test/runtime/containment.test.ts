/**
 * Issue #13, items 2 and 3: one bot's hostile code must not cost the server its memory nor other bots
 * their turns. A real server (the harness, listening) with the default 128 MB per bot and a 3 s budget
 * per hook; bombs run in one bot while another bot is talked to. No performance thresholds: the other
 * bot's replies must come while the bomb still runs (within half its 8 s budget), not after it (before
 * the fix, a turn sent to the bomb's worker waited for the bomb's whole budget, and its conversation
 * with it), counts and memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, sleep, STREAM_CONFIG, Talk, textOf, waitForLog } from './helpers.js'

const LIMITS = { budgetMs: 8000, timeoutMs: 20_000, memoryBytes: 128 * 1024 * 1024 }
const MB = 1024 * 1024

const attacker = (body: string) => String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    if (event.payload.text === 'attack') { ${body} }
    await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
  },
  async afterTurnEnd({ event, client }) {
    if (event.type === 'text' && event.payload.text === 'attack') await client.createMessage({ payload: { type: 'text', text: 'turn ended' } })
  },
}`

const ECHO = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: 'echo ' + event.payload.text } })
  },
}`

describe('runtime: one bot\'s hostile code costs neither the server\'s memory nor other bots\' turns', () => {
  let h: Harness
  let others: Talk[]

  beforeAll(async () => {
    // one worker in the ordinary pool: every turn sent while a bomb starts shares its worker
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, sandboxLimits: LIMITS, sandboxWorkers: 1 } })
    const echo = await createBot(h, ECHO)
    others = await Promise.all([0, 1, 2, 3].map(() => Talk.open(echo)))
    for (const talk of others) expect(await talk.askText('warm')).toEqual(['echo warm'])
  }, 60_000)

  afterAll(async () => {
    for (const talk of others ?? []) await talk.close()
    await h?.close()
  })

  it('a bot filling memory up to its limit: stopped, and the server\'s RSS comes back to where it was (WebAssembly heaps only grow: the worker is recycled)', async () => {
    const bot = await createBot(h, attacker('const a = []; for (;;) a.push(new Array(100000).fill(1.5))'))
    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('warm')).toEqual(['ok warm'])
      const before = process.memoryUsage().rss
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss)
      }, 50)
      await talk.say('attack')
      await talk.say('after')
      await talk.until(() => talk.botTexts().includes('ok after'), 'the reply after the attack', 30_000)
      // the limit held: out of memory, recorded in the bot's logs; the other hooks of the turn still ran
      await waitForLog(h, bot.id, (l) => l.level === 'error' && /out of memory/.test(l.message))
      expect(talk.botTexts()).toContain('turn ended')
      // back within 150 MB of before (it grew by ~1.7 GB and stayed there before the fix)
      const deadline = Date.now() + 20_000
      while (process.memoryUsage().rss > before + 150 * MB && Date.now() < deadline) await sleep(200)
      clearInterval(sampler)
      const after = process.memoryUsage().rss
      expect(Math.round((after - before) / MB), `RSS before ${Math.round(before / MB)} MB, peak ${Math.round(peak / MB)} MB, after ${Math.round(after / MB)} MB`).toBeLessThanOrEqual(150)
      expect(await talk.askText('later')).toEqual(['ok later'])
      // what happened is visible to operators
      const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text()
      expect(Number(/^parley_sandbox_workers_retired (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1)
      expect(Number(/^parley_sandbox_quarantined_bots (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1)
      // the workers' WebAssembly heaps, the bomb's given back: under the cap of one worker (768 MB)
      expect(Number(/^parley_sandbox_heap_bytes (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0)
      expect(Number(/^parley_sandbox_heap_bytes (\d+)$/m.exec(metrics)?.[1])).toBeLessThan(768 * MB)
    } finally {
      await talk.close()
    }
  })

  for (const bomb of [
    { name: 'a busy loop (while (true) {})', body: 'while (true) {}' },
    { name: 'a microtask loop (for (;;) await null)', body: 'for (;;) await null' },
    { name: 'an allocation loop', body: 'const a = []; for (;;) a.push(new Array(100000).fill(1.5))' },
  ]) {
    it(`${bomb.name} in one bot: another bot's turns keep being answered while it runs, none waits for its end`, async () => {
      const bot = await createBot(h, attacker(bomb.body))
      const talk = await Talk.open(bot)
      try {
        expect(await talk.askText('warm')).toEqual(['ok warm'])
        const start = others.map((t) => t.botMessages().length)
        await talk.say('attack')
        await talk.say('after')
        // messages to the other bot during the first second and a half of the bomb
        const sent: Array<{ talk: Talk; text: string; at: number }> = []
        for (let i = 0; i < 30; i++) {
          const other = others[i % others.length]!
          const text = `during ${bomb.name} ${i}`
          const at = Date.now()
          await other.say(text)
          sent.push({ talk: other, text, at })
          await sleep(50)
        }
        for (const { talk: other, text } of sent) {
          await other.until(() => other.botTexts().includes(`echo ${text}`), `the other bot's reply to "${text}"`, 30_000)
        }
        await talk.until(() => talk.botTexts().includes('ok after'), 'the reply after the attack', 30_000)
        const replies = others.flatMap((t, i) => t.botMessages().slice(start[i]))
        const waited = sent
          .map(({ text, at }) => ({ text, ms: replies.find((m) => textOf(m) === `echo ${text}`)!.receivedAt - at }))
          .filter(({ ms }) => ms > LIMITS.budgetMs / 2)
        expect(waited, 'replies of the other bot that waited for the bomb').toEqual([])
        // each answered once
        for (const { text } of sent) expect(replies.filter((m) => textOf(m) === `echo ${text}`)).toHaveLength(1)
      } finally {
        await talk.close()
      }
    })
  }

  it('a hook that leaves an endless promise chain running: the turn goes on (afterTurnEnd runs), the chain is stopped and logged', async () => {
    const bot = await createBot(h, attacker('const f = () => Promise.resolve().then(f); f()'))
    const talk = await Talk.open(bot)
    try {
      await talk.say('attack')
      await talk.until(() => talk.botTexts().includes('turn ended'), 'afterTurnEnd of the attack', 15_000)
      expect(talk.botTexts()).toEqual(['ok attack', 'turn ended'])
      await waitForLog(h, bot.id, (l) => /Promise jobs were still running after the run ended/.test(l.message))
      expect(await talk.askText('later')).toEqual(['ok later'])
    } finally {
      await talk.close()
    }
  })
})

describe('runtime: a hook stopped at its budget does not end the turn', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, sandboxLimits: { budgetMs: 500, timeoutMs: 10_000, memoryBytes: 32 * MB } } })
  }, 60_000)

  afterAll(async () => {
    await h?.close()
  })

  // Before the fix, each of these ended the whole turn: afterTurnEnd never ran (docs/bot-code.md: "the remaining
  // hooks and cards still run").
  for (const bomb of [
    { name: 'a microtask loop (for (;;) await null)', body: 'for (;;) await null' },
    { name: 'a busy loop (while (true) {})', body: 'while (true) {}' },
    { name: 'an awaited promise that never settles', body: 'await new Promise(() => {})' },
    { name: 'a nested promise chain awaited', body: 'const f = () => Promise.resolve().then(f); await f()' },
  ]) {
    it(`${bomb.name} in afterIncoming: recorded as timed out, afterTurnEnd still runs`, async () => {
      const bot = await createBot(h, attacker(bomb.body))
      const talk = await Talk.open(bot)
      try {
        await talk.say('attack')
        await talk.until(() => talk.botTexts().includes('turn ended'), 'afterTurnEnd of the attack', 15_000)
        // the attacked hook's own reply never came: it was stopped where it was
        expect(talk.botTexts()).toEqual(['turn ended'])
        // stopped at its budget, or (a loaded machine: the nested chain grows faster than the budget runs out) at its
        // memory limit, worded as such (it was logged as "hooks.afterIncoming: null", what QuickJS throws then)
        await waitForLog(h, bot.id, (l) => l.level === 'error' && /hooks\.afterIncoming: (timed out|.*interrupted|out of memory: it used more than its memory limit)/.test(l.message))
        expect(await talk.askText('later')).toEqual(['ok later'])
      } finally {
        await talk.close()
      }
    })
  }
})
