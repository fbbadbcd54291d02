/**
 * Unchanged @botpress/sdk@5.4.3 bots (test/fixtures/sdk-bots/*.mjs) run as child processes, their
 * Runtime API client pointed at Parley (BP_API_URL, BP_TOKEN = a bot API key, BP_BOT_ID), deployed
 * with updateBot({ url }). A user talks to them through the official @botpress/chat client and sees
 * their answers on the conversation's stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { startSdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { adminClient, allLogs, createBot, STREAM_CONFIG, Talk, uid, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 5_000, attempts: 3, backoffMs: 50, maxBackoffMs: 200, concurrencyPerBot: 8, concurrency: 32 }

/** A bot of `h` served by the SDK program `script`, with a bot API key and the given state declarations. */
export async function deploySdkBot(h: Harness, script: string, states: Record<string, unknown> = {}): Promise<{ bot: TestBot; program: SdkBot }> {
  const admin = adminClient(h)
  const bot = await createBot(h)
  const key = await admin.createBotApiKey({ botId: bot.id, note: 'sdk bot' })
  const program = await startSdkBot(script, { apiUrl: h.baseUrl, token: key.value, botId: bot.id })
  await admin.updateBot({ id: bot.id, url: program.url, ...(Object.keys(states).length > 0 && { states: states as never }) })
  return { bot, program }
}

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
})
