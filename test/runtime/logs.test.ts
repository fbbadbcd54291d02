/**
 * The bot's logs through the official admin client's getBotLogs: console.* output of every kind of
 * user code (hooks, actions, execute cards), with its level and conversation, paging with
 * nextToken, the time range, and the failures the runtime records (each once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, allLogs, createBot, ISO_Z, STREAM_CONFIG, Talk, waitForLog, type BotLog, type TestBot } from './helpers.js'

const CODE = String.raw`
export const actions = {
  async noisy(ctx, input) { console.warn('action says', input); return 1 },
}
export const hooks = {
  beforeIncoming({ event }) {
    if (event.type === 'text' && event.payload.text === 'levels') console.debug('before', 'incoming')
  },
  async afterIncoming({ event, client, actions }) {
    if (event.type !== 'text' || event.trigger) return
    const t = event.payload.text
    if (t === 'levels') {
      console.log('plain log', 42, { a: 1 }, [1, 2], null, true)
      console.info('an info')
      console.warn('a warning')
      console.error('an error', new TypeError('typed'))
      console.debug('a debug line')
      await actions.noisy({ k: 'v' })
    }
    if (t.startsWith('many ')) {
      const n = Number(t.slice(5))
      for (let i = 0; i < n; i++) console.log('line ' + i)
    }
    if (t === 'long') console.log('x'.repeat(100000))
    if (t === 'throw') throw new Error('boom-from-the-hook')
    if (t === 'bad send') await client.createMessage({ payload: { type: 'nonsense' } })
    if (t === 'spin') for (;;) {}
    await client.createMessage({ payload: { type: 'text', text: 'done ' + t } })
  },
}
export const workflows = {
  exec: {
    trigger: { type: 'message', text: 'exec' },
    nodes: { a: { cards: [{ type: 'execute', code: 'console.log("from an execute card", event.preview)' }, { type: 'say', text: 'done exec' }] } },
  },
}
`

describe('runtime: bot logs (getBotLogs)', () => {
  let h: Harness
  let bot: TestBot
  let talk: Talk

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, sandboxLimits: { budgetMs: 500, timeoutMs: 3000, memoryBytes: 64 * 1024 * 1024 } } })
    bot = await createBot(h, CODE)
    talk = await Talk.open(bot)
  })
  afterAll(async () => {
    await talk?.close()
    await h?.close()
  })

  const mine = (logs: BotLog[]) => logs.filter((l) => l.conversationId === talk.conversationId)

  it('console.* of hooks, actions and execute cards, with levels, text formatting, timestamp and conversation', async () => {
    expect(await talk.askText('levels')).toEqual(['done levels'])
    expect(await talk.askText('exec')).toEqual(['done exec'])
    await waitForLog(h, bot.id, (l) => l.message.startsWith('from an execute card'))
    const logs = mine((await allLogs(h, bot.id)).logs)
    const pick = (prefix: string) => logs.find((l) => l.message.startsWith(prefix))
    expect(pick('before incoming')).toMatchObject({ level: 'debug' })
    expect(pick('plain log')).toMatchObject({ level: 'info', message: 'plain log 42 {"a":1} [1,2] null true' })
    expect(pick('an info')).toMatchObject({ level: 'info' })
    expect(pick('a warning')).toMatchObject({ level: 'warn' })
    expect(pick('an error')).toMatchObject({ level: 'error', message: 'an error TypeError: typed' })
    expect(pick('a debug line')).toMatchObject({ level: 'debug' })
    expect(pick('action says')).toMatchObject({ level: 'warn', message: 'action says {"k":"v"}' })
    expect(pick('from an execute card')).toMatchObject({ level: 'info', message: 'from an execute card exec' })
    for (const l of logs) {
      expect(l.timestamp).toMatch(ISO_Z)
      expect(l.conversationId).toBe(talk.conversationId)
    }
    // in the order they were written
    const order = ['before incoming', 'plain log', 'an info', 'a warning', 'an error', 'a debug line', 'action says', 'from an execute card']
    expect(order.map((p) => logs.findIndex((l) => l.message.startsWith(p)))).toEqual(
      [...order.map((p) => logs.findIndex((l) => l.message.startsWith(p)))].sort((a, b) => a - b),
    )
  })

  it('pages of at most 100 lines with nextToken, oldest first, nothing lost or repeated', async () => {
    expect(await talk.askText('many 250')).toEqual(['done many 250'])
    await waitForLog(h, bot.id, (l) => l.message === 'line 249')
    const { logs, pages } = await allLogs(h, bot.id)
    expect(pages.length).toBeGreaterThanOrEqual(3)
    for (const size of pages.slice(0, -1)) expect(size).toBe(100)
    const lines = logs.filter((l) => /^line \d+$/.test(l.message)).map((l) => l.message)
    expect(lines).toEqual(Array.from({ length: 250 }, (_, i) => `line ${i}`))
    const stamps = logs.map((l) => Date.parse(l.timestamp))
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]!).toBeGreaterThanOrEqual(stamps[i - 1]!)
  })

  it('timeStart and timeEnd select a time range', async () => {
    const { logs } = await allLogs(h, bot.id)
    const last = logs.at(-1)!
    const after = await adminClient(h).getBotLogs({ id: bot.id, timeStart: new Date(Date.parse(last.timestamp) + 1).toISOString() })
    expect(after.logs).toEqual([])
    const first = logs[0]!
    const until = await adminClient(h).getBotLogs({ id: bot.id, timeStart: '2000-01-01T00:00:00.000Z', timeEnd: first.timestamp })
    expect(until.logs.length).toBeGreaterThanOrEqual(1)
    for (const l of until.logs) expect(Date.parse(l.timestamp)).toBeLessThanOrEqual(Date.parse(first.timestamp))
  })

  it('a very long line is cut, not refused', async () => {
    expect(await talk.askText('long')).toEqual(['done long'])
    const line = await waitForLog(h, bot.id, (l) => l.message.startsWith('xxxx'))
    expect(line.message.length).toBeGreaterThan(1000)
    expect(line.message.length).toBeLessThanOrEqual(10_000)
  })

  it('failures are recorded as errors, each once: a throwing hook, a refused send, a timed-out hook', async () => {
    await talk.say('throw')
    await talk.say('bad send')
    await talk.say('spin')
    expect(await talk.askText('after the failures')).toEqual(['done after the failures'])
    await waitForLog(h, bot.id, (l) => l.message.includes('boom-from-the-hook'))
    const logs = mine((await allLogs(h, bot.id)).logs)
    const thrown = logs.filter((l) => l.message.includes('boom-from-the-hook'))
    expect(thrown).toHaveLength(1)
    // With the line and column of the deployed code where it was thrown (QuickJS points at the parenthesis of the Error call).
    const line = CODE.split('\n').findIndex((l) => l.includes('boom-from-the-hook')) + 1
    expect(thrown[0]).toMatchObject({ level: 'error', message: `hooks.afterIncoming: boom-from-the-hook (at bot.js:${line}:${CODE.split('\n')[line - 1]!.indexOf('Error(') + 'Error('.length})` })
    const refused = logs.filter((l) => l.level === 'error' && /hooks\.afterIncoming: .*(payload|InvalidPayload)/.test(l.message))
    expect(refused).toHaveLength(1)
    const spun = logs.filter((l) => l.level === 'error' && /interrupted|timed out|time limit/.test(l.message))
    expect(spun).toHaveLength(1)
  })
})
