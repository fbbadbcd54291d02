/**
 * Bot code's language-model calls (issue #28 item 4, docs/llm.md "From bot code"): client.generateText and
 * client.generateTextStream in sandboxed hooks, over real HTTP with the official chat client. The provider is the LLM
 * stand-in (test/helpers/llm-stand-in.ts: no model can run or be downloaded here, so a local server speaks the OpenAI
 * wire, JSON and SSE streaming). Checked: the answer and its metadata reach the hook, each call is recorded for the
 * turn's conversation and user, bot code's input is refused with the v2 route's own message, and a model slower than
 * the hook's budget ends with the hook (its provider request abandoned, not left running).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/harness.js'
import { parleyWithStandIn, recordedCalls, type LlmStandIn } from '../helpers/llm-stand-in.js'
import { createBotKey } from '../helpers/runtime-client.js'
import { createBot, Talk, waitForLog } from './helpers.js'

const BUDGET_MS = 1500

const BOT = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    const [mode, text] = event.payload.text.split(': ')
    const request = { model: 'local:small', systemPrompt: 'Be brief.', messages: [{ role: 'user', content: text }], meta: { promptSource: 'bot:test' } }
    if (mode === 'once') {
      const r = await client.generateText(request)
      await client.createMessage({ payload: { type: 'text', text: r.output + ' | ' + r.metadata.model + ' ' + r.metadata.usage.outputTokens } })
    } else if (mode === 'stream') {
      let pieces = 0, out = '', last
      for await (const chunk of client.generateTextStream(request)) {
        if (chunk.finished) last = chunk
        else { pieces++; out += chunk.output }
      }
      await client.createMessage({ payload: { type: 'text', text: out + ' | ' + (pieces > 1) + ' ' + last.metadata.model + ' ' + last.metadata.stopReason } })
    } else if (mode === 'bad') {
      try { await client.generateText({ messages: 'not a list' }) } catch (e) { await client.createMessage({ payload: { type: 'text', text: 'refused: ' + e.message } }) }
    } else if (mode === 'slow') {
      await client.generateText(request)
      await client.createMessage({ payload: { type: 'text', text: 'never' } })
    }
  },
}`

describe('bot code calls a language model', () => {
  let llm: Awaited<ReturnType<typeof parleyWithStandIn>>
  let h: Harness
  let standIn: LlmStandIn
  let talk: Talk
  let botId: string

  beforeAll(async () => {
    llm = await parleyWithStandIn((url) => [{ name: 'local', kind: 'openai', url, apiKey: 'sk-test', models: ['small'] }], {
      env: { PARLEY_BOT_TIMEOUT_MS: String(BUDGET_MS), PARLEY_LLM_TIMEOUT_MS: '60000' },
    })
    ;({ h, standIn } = llm)
    const bot = await createBot(h, BOT)
    botId = bot.id
    talk = await Talk.open(bot)
  })
  afterAll(async () => {
    await talk?.close()
    await llm?.close()
  })
  beforeEach(() => llm.fresh())

  it('client.generateText: the answer and its metadata; the call is recorded for the turn\'s conversation and user, via bot-code', async () => {
    standIn.answer = () => ({ text: 'Paris is the capital.' })
    expect(await talk.askText('once: Capital of France?')).toEqual(['Paris is the capital. | local:small 4'])
    expect(standIn.requests[0]!.body).toMatchObject({ model: 'small', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Capital of France?' }] })
    const [call] = (await recordedCalls(h, botId)).slice(-1)
    expect(call).toMatchObject({ botId, via: 'bot-code', conversationId: talk.conversationId, userId: talk.user.user.id, provider: 'local', model: 'small', promptSource: 'bot:test', outputTokens: 4 })
  })

  it('client.generateTextStream: the pieces as they come, then the final chunk with the metadata (the provider was asked to stream)', async () => {
    standIn.answer = () => ({ text: 'one two three four five' })
    expect(await talk.askText('stream: Count')).toEqual(['one two three four five | true local:small stop'])
    expect(standIn.requests[0]!.body.stream).toBe(true)
    expect((await recordedCalls(h, botId)).slice(-1)[0]).toMatchObject({ via: 'bot-code', conversationId: talk.conversationId })
  })

  it('bot code\'s input is refused with the message the v2 route gives for the same body', async () => {
    const key = (await createBotKey(h)).value
    const route = await h.app.inject({
      method: 'POST', url: '/v2/cognitive/generate-text', headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId, 'content-type': 'application/json' },
      payload: JSON.stringify({ messages: 'not a list' }),
    })
    expect(route.statusCode).toBe(400)
    const message = (route.json() as { message: string }).message
    expect(message).toMatch(/messages/)
    // (errors of the host reach bot code as `Type: message`, as every client method's)
    expect(await talk.askText('bad: x')).toEqual([`refused: InvalidPayload: ${message}`])
    expect(standIn.requests).toEqual([])
  })

  it('a model slower than the hook\'s budget: the hook times out and the provider request is abandoned with it', async () => {
    standIn.answer = () => ({ fault: 'hang' })
    const started = Date.now()
    await talk.say('slow: anything')
    const log = await waitForLog(h, botId, (l) => /hooks\.afterIncoming: timed out/.test(l.message))
    expect(log.level).toBe('error')
    // the provider's connection closed with the budget, long before the provider timeout (60 s)
    await standIn.settled()
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(standIn.requests).toHaveLength(1)
    expect(talk.botTexts()).not.toContain('never')
  })
})
