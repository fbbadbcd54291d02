/**
 * Unchanged @botpress/sdk@5.4.3 bots (test/fixtures/sdk-bots/*.mjs) run as child processes, their
 * Runtime API client pointed at Parley (BP_API_URL, BP_TOKEN = a bot API key, BP_BOT_ID), deployed
 * with updateBot({ url }). A user talks to them through the official @botpress/chat client and sees
 * their answers on the conversation's stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { deploySdkBot, startSdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { adminClient, allLogs, createBot, STREAM_CONFIG, Talk, uid, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 20_000, attempts: 3, backoffMs: 50, maxBackoffMs: 200 }

const COUNTER = { counter: { type: 'user', schema: { type: 'object', properties: { count: { type: 'number' } } } } }

describe('unchanged @botpress/sdk bots on Parley', () => {
  let h: Harness
  const programs: SdkBot[] = []

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
  })
  afterAll(async () => {
    await Promise.all(programs.map((p) => p.stop()))
    await h?.close()
  })

  it('an echo bot answers every message on the stream, with a user state kept across turns', async () => {
    const { bot, program } = await deploySdkBot(h, 'echo-bot.mjs', COUNTER)
    programs.push(program)
    const userId = uid('user')
    const talk = await Talk.open(bot, { userId })
    try {
      const first = await talk.askText('hello').catch(async (err: Error) => {
        throw new Error(`${err.message}\nbot program: ${program.output()}\nbot logs: ${JSON.stringify((await allLogs(h, bot.id)).logs)}`)
      })
      expect(first).toEqual(['echo #1: hello'])
      expect(await talk.askText('again')).toEqual(['echo #2: again'])
      const reply = talk.botMessages()[0]!
      expect(reply.userId).toBe(bot.id)
      expect(reply.isBot).toBe(true)
    } finally {
      await talk.close()
    }
    // The same user in another conversation: the user state goes on.
    const other = await Talk.open(bot, { userId })
    try {
      expect(await other.askText('third')).toEqual(['echo #3: third'])
    } finally {
      await other.close()
    }
  })

  it('a bot reacting to custom events answers the chat client\'s createEvent', async () => {
    const { bot, program } = await deploySdkBot(h, 'events-bot.mjs')
    programs.push(program)
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      await talk.event({ name: 'clicked', data: { button: 'buy' } })
      await talk.botCount(1)
      expect(talk.botTexts()).toEqual(['event clicked: {"button":"buy"}'])
    } finally {
      await talk.close()
    }
  })

  it('callAction runs the SDK bot\'s action (action_triggered) and returns its output; a failing action is a 400 with its status, never the answer\'s body (#24)', async () => {
    const { bot, program } = await deploySdkBot(h, 'action-bot.mjs')
    programs.push(program)
    const client = await runtimeClient(h, bot.id)
    const result = await client.callAction({ type: 'multiply', input: { a: 6, b: 7 } })
    expect(result.output).toEqual({ product: 42 })
    expect(result.meta).toEqual({ cached: false })
    const err = await client.callAction({ type: 'fail', input: {} }).then(() => undefined, (e: { code?: number; type?: string; message?: string }) => e)
    expect(err?.code).toBe(400)
    expect(err?.type).toBe('Runtime')
    expect(err?.message).toMatch(/^Action "fail" failed in the bot \(it answered \d{3}\)$/)
    expect(err?.message).not.toMatch(/this action always fails/)
  })

  it('a bot posts a proactive message (on register, with no incoming message) that the chat client sees on its stream', async () => {
    const admin = adminClient(h)
    const bot = await createBot(h)
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      const key = await admin.createBotApiKey({ botId: bot.id, note: 'sdk bot' })
      const program = await startSdkBot('proactive-bot.mjs', { apiUrl: h.baseUrl, token: key.value, botId: bot.id })
      programs.push(program)
      await admin.updateBot({ id: bot.id, url: program.url })
      await talk.botCount(1)
      expect(talk.botTexts()).toEqual(['I am online'])
      expect(talk.botMessages()[0]!.userId).toBe(bot.id)
    } finally {
      await talk.close()
    }
  })
})

describe('callAction on a sandboxed bot', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('runs the deployed module\'s action with the input; unknown actions are 404, throwing ones 400, non-object outputs 400', async () => {
    const bot = await createBot(h, `export const actions = {
      add: async (ctx, input) => ({ sum: input.a + input.b, bot: typeof ctx.client.createMessage }),
      boom: async () => { throw new Error('kaboom') },
      bad: async () => 42,
      spin: async () => { for (;;) {} },
    }`)
    const client = await runtimeClient(h, bot.id)
    expect((await client.callAction({ type: 'add', input: { a: 2, b: 3 } })).output).toEqual({ sum: 5, bot: 'function' })
    const fail = (type: string) => client.callAction({ type, input: {} }).then(() => undefined, (e: { code?: number; message?: string }) => e)
    const unknown = await fail('nope')
    expect(unknown?.code).toBe(404)
    expect(unknown?.message).toMatch(/nope/)
    const boom = await fail('boom')
    expect(boom?.code).toBe(400)
    expect(boom?.message).toMatch(/kaboom/)
    expect((await fail('bad'))?.code).toBe(400)
  })

  it('callAction is guarded like every Runtime API operation: 401 without a valid key, 403 with another bot\'s key, 413 over 1 MB', async () => {
    const bot = await createBot(h, 'export const actions = { echo: async (ctx, input) => input }')
    const other = await createBot(h)
    const own = await adminClient(h).createBotApiKey({ botId: bot.id, note: 'own' })
    const foreign = await adminClient(h).createBotApiKey({ botId: other.id, note: 'other' })
    const post = (headers: Record<string, string>, body: string) => fetch(`${h.baseUrl}/v1/chat/actions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
    const small = JSON.stringify({ type: 'echo', input: { a: 1 } })
    expect((await post({ 'x-bot-id': bot.id }, small)).status).toBe(401)
    expect((await post({ authorization: 'Bearer bak_forged000000000000000000000000', 'x-bot-id': bot.id }, small)).status).toBe(401)
    expect((await post({ authorization: `Bearer ${foreign.value}`, 'x-bot-id': bot.id }, small)).status).toBe(403)
    const ok = await post({ authorization: `Bearer ${own.value}`, 'x-bot-id': bot.id }, small)
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ output: { a: 1 }, meta: { cached: false } })
    const big = JSON.stringify({ type: 'echo', input: { s: 'x'.repeat(1024 * 1024 + 10) } })
    const tooBig = await post({ authorization: `Bearer ${own.value}`, 'x-bot-id': bot.id }, big)
    expect(tooBig.status).toBe(413)
    expect((await tooBig.json()).type).toBe('PayloadTooLarge')
  })

  it('a bot without code or url has no actions (404)', async () => {
    const bot = await createBot(h)
    const client = await runtimeClient(h, bot.id)
    const err = await client.callAction({ type: 'any', input: {} }).then(() => undefined, (e: { code?: number }) => e)
    expect(err?.code).toBe(404)
  })
})


describe('an @botpress/sdk bot killed (SIGKILL) in the middle of a turn', () => {
  let h: Harness

  beforeAll(async () => {
    // retries spread over ~10 s: long enough for the program to be started again
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: { ...REMOTE, attempts: 12, backoffMs: 200, maxBackoffMs: 1_000 } } })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('gets the interrupted message again once it is back, answers each message once, in order', async () => {
    const { bot, program } = await deploySdkBot(h, 'echo-bot.mjs', COUNTER, { PAUSE_ON: 'slow' })
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      await talk.say('slow 1')
      const deadline = Date.now() + 20_000
      while (!program.output().includes('pausing on') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      expect(program.output(), 'the program got the message and holds its turn').toContain('pausing on')
      await program.kill()
      await talk.say('m2')
      await talk.say('m3')
      await program.start({ PAUSE_ON: '' })
      await talk.botCount(3)
      expect(talk.botTexts()).toEqual(['echo #1: slow 1', 'echo #2: m2', 'echo #3: m3'])
      const failed = (await allLogs(h, bot.id)).logs.filter((l) => l.level === 'error')
      expect(failed, 'no delivery given up').toEqual([])
    } finally {
      await talk.close()
      await program.stop()
    }
  })
})
