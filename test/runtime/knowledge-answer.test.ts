/**
 * Knowledge answers (issue #29 item 1 and 3; docs/bot-code.md "knowledge"): a knowledge card asks the configured
 * language model to answer from the best passages, through the LLM gateway (so the call is recorded and budgeted), and
 * sends the answer with `metadata.citations` (the passages it cited) while its pieces stream to the conversation's
 * listeners as Botpress's `message_stream_delta` signals, then `message_stream_complete` and one `message_created`.
 * No model can run here: the model is the tests' OpenAI-compatible stand-in (test/helpers/llm-stand-in.ts), whose
 * requests are inspected (the passages that hold the answer reach the prompt). Also: no passage over the threshold (the
 * model is not asked), the model's NO_ANSWER, a failing provider or a stream cut mid-way (the best passage, the stream
 * aborted), and the older PARLEY_KB_ANSWER_URL setting, which now adds a provider to the gateway.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/harness.js'
import { startParley } from '../helpers/harness.js'
import { parleyWithStandIn, recordedCalls, startLlmStandIn, type LlmStandIn, type StandInRequest } from '../helpers/llm-stand-in.js'
import { WebchatSession } from '../helpers/webchat-api.js'
import { createBot, STREAM_CONFIG, Talk, timeline, uid, type TestBot } from './helpers.js'

const CODE = String.raw`
export const workflows = {
  faq: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'knowledge', noAnswer: 'I do not know that.' }] } } },
}
`
const MUSEUM = 'The museum opens at 10:00 every day except Monday.'
const CAFE = 'The museum cafe serves coffee and cakes until 17:00.'

/** The prompt's numbered passages ([n] → its text), as the stand-in received them. */
function passages(request: StandInRequest): Map<number, string> {
  const user = (request.body.messages as { role: string; content: string }[]).find((m) => m.role === 'user')!.content
  return new Map([...user.matchAll(/^\[(\d+)\] \([^)]*\) (.*)$/gm)].map((m) => [Number(m[1]), m[2]!]))
}
/** The number the prompt gave the passage containing `text`. */
const numberOf = (request: StandInRequest, text: string) => [...passages(request)].find(([, p]) => p.includes(text))?.[0]


describe('knowledge card: answers by the configured model, with citations, streamed', () => {
  let llm: Awaited<ReturnType<typeof parleyWithStandIn>>
  let h: Harness
  let standIn: LlmStandIn
  let bot: TestBot
  const fileIds: Record<string, string> = {}

  beforeAll(async () => {
    llm = await parleyWithStandIn((url) => [{ name: 'local', kind: 'openai', url, models: ['kb-model'] }], { config: STREAM_CONFIG })
    ;({ h, standIn } = llm)
    bot = await createBot(h, CODE)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
    for (const [key, text] of [['museum.md', `# Museum\n\n${MUSEUM}`], ['cafe.md', `# Cafe\n\n${CAFE}`]]) {
      fileIds[key!] = (await files.uploadFile({ key: key!, content: text!, index: true })).file.id
    }
    await h.app.services.files.knowledge.idle()
  })
  afterAll(async () => llm?.close())
  beforeEach(() => llm.fresh())

  it('the passages reach the prompt; the answer cites the right file; the call is recorded (via knowledge) for the conversation and user', async () => {
    standIn.answer = (request) => ({ text: `The museum opens at 10:00 [${numberOf(request, '10:00')}].` })
    const talk = await Talk.open(bot, { userId: uid('kb') })
    try {
      const [answer] = await talk.ask('When does the museum open?')
      const request = standIn.requests[0]!
      expect(request.body.model).toBe('kb-model')
      const system = request.body.messages[0]
      expect(system.role).toBe('system')
      expect(system.content).toMatch(/only the numbered passages/)
      expect(system.content).toMatch(/language the question is written in/)
      expect(system.content).toMatch(/NO_ANSWER/)
      const user = request.body.messages[1].content as string
      expect(user).toContain('Question: When does the museum open?')
      expect([...passages(request).values()].some((p) => p.includes(MUSEUM))).toBe(true)
      // The marker is taken out of the text; the sources are the cited passages' files only.
      expect((answer!.payload as { text: string }).text).toBe('The museum opens at 10:00.\n\nSources: museum.md')
      const citations = (answer as unknown as { metadata: { citations: Record<string, unknown>[] } }).metadata.citations
      expect(citations).toEqual([{ fileId: fileIds['museum.md'], key: 'museum.md', title: expect.any(String), passageId: expect.any(String), quote: expect.stringContaining(MUSEUM) }])
      const [call] = (await recordedCalls(h, bot.id)).slice(-1)
      expect(call).toMatchObject({ via: 'knowledge', provider: 'local', model: 'kb-model', conversationId: talk.conversationId, userId: talk.user.user.id, promptSource: 'knowledge-answer' })
    } finally {
      await talk.close()
    }
  })

  it('streams: the pieces in order (message_stream_delta), then message_stream_complete, then one message_created carrying the stream id', async () => {
    standIn.answer = (request) => ({ text: `Open from ten [${numberOf(request, '10:00')}], closed on Mondays.`, paceMs: 60 })
    const talk = await Talk.open(bot, { userId: uid('kb-stream') })
    const frames = timeline(talk)
    try {
      const [answer] = await talk.ask('When does the museum open?')
      expect(standIn.requests[0]!.body.stream).toBe(true)
      const deltas = frames.filter((f) => f.type === 'message_stream_delta')
      expect(deltas.length).toBeGreaterThan(1)
      expect(deltas.map((d) => d.data.sequence)).toEqual(deltas.map((_, i) => i))
      expect(deltas.map((d) => d.data.delta).join('')).toBe(`Open from ten [${numberOf(standIn.requests[0]!, '10:00')}], closed on Mondays.`)
      const streamId = deltas[0]!.data.streamId as string
      expect(deltas.every((d) => d.data.streamId === streamId && d.data.conversationId === talk.conversationId && d.data.userId === bot.id)).toBe(true)
      const after = frames.slice(frames.indexOf(deltas.at(-1)!) + 1).map((f) => f.type)
      expect(after).toEqual(['message_stream_complete', 'message_created'])
      const complete = frames.find((f) => f.type === 'message_stream_complete')!
      expect(complete.data.streamId).toBe(streamId)
      expect(complete.data.message.id).toBe(answer!.id)
      expect((answer as unknown as { metadata: { streamId: string } }).metadata.streamId).toBe(streamId)
      expect((answer!.payload as { text: string }).text).toBe('Open from ten, closed on Mondays.\n\nSources: museum.md')
    } finally {
      await talk.close()
    }
  })

  it('Botpress\'s webchat API (4.5.2 has no stream signals): the answer grows as one draft (message_updated), then the final message takes its place', async () => {
    standIn.answer = (request) => ({ text: `Open from ten [${numberOf(request, '10:00')}], closed on Mondays.`, paceMs: 60 })
    const webchat = await WebchatSession.open(h.baseUrl, bot.webhookId)
    try {
      expect((await webchat.send({ type: 'text', text: 'When does the museum open?' }, { clientMessageId: 'q1' })).status).toBe(201)
      const signals = () => webchat.signals()
      await webchat.stream.waitUntil(() => signals().some((f) => f.type === 'message_created' && f.data.metadata?.streamId), 10_000)
      const drafts = signals().filter((f) => f.type === 'message_updated')
      expect(drafts.length).toBeGreaterThan(1)
      const streamId = drafts[0]!.data.id as string
      // One draft, its text growing: each update is the whole text so far.
      expect(drafts.every((d) => d.data.id === streamId && d.data.metadata.clientMessageId === streamId && d.data.userId === bot.id)).toBe(true)
      const texts = drafts.map((d) => d.data.payload.text as string)
      expect(texts.every((t, i) => i === 0 || t.startsWith(texts[i - 1]!))).toBe(true)
      // The final message carries the draft's clientMessageId: the webchat replaces the draft with it (one bubble).
      const final = signals().find((f) => f.type === 'message_created' && f.data.metadata?.streamId)!
      expect(final.data.metadata).toMatchObject({ streamId, clientMessageId: streamId })
      expect(final.data.payload.text).toBe('Open from ten, closed on Mondays.\n\nSources: museum.md')
      expect(signals().map((f) => f.type).filter((t) => t.startsWith('message_stream'))).toEqual([])
    } finally {
      await webchat.close()
    }
  })

  it('client.searchKnowledge({ answer: true }): the search and the model\'s answer with its citations, not streamed (bot code sends its own message)', async () => {
    const coder = await createBot(h, String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    const found = await client.searchKnowledge({ query: event.payload.text, answer: true })
    const a = found.answer
    await client.createMessage({ payload: { type: 'text', text: (a.noAnswer ? 'none' : a.text) + ' | ' + a.citations.map((c) => c.key).join(',') + ' | ' + found.results.length } })
  },
}`)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: coder.id })
    await files.uploadFile({ key: 'museum.md', content: `# Museum\n\n${MUSEUM}`, index: true })
    await h.app.services.files.knowledge.idle()
    standIn.answer = (request) => ({ text: `Ten o'clock [${numberOf(request, '10:00')}].`, paceMs: 40 })
    const talk = await Talk.open(coder, { userId: uid('kb-code') })
    const frames = timeline(talk)
    try {
      expect(await talk.askText('When does the museum open?')).toEqual(["Ten o'clock. | museum.md | 1"])
      expect(frames.filter((f) => f.type.startsWith('message_stream'))).toEqual([])
      expect((await recordedCalls(h, coder.id)).at(-1)).toMatchObject({ via: 'knowledge', conversationId: talk.conversationId })
      standIn.reset()
      expect(await talk.askText('zebra quantum xylophone')).toEqual(['none |  | 0'])
      expect(standIn.requests).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('no passage reaches the threshold: the card\'s no-answer message, and the model is not asked', async () => {
    const talk = await Talk.open(bot, { userId: uid('kb-none') })
    try {
      expect(await talk.askText('zebra quantum xylophone')).toEqual(['I do not know that.'])
      expect(standIn.requests).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('the model says NO_ANSWER: the card\'s no-answer message, without citations; no piece of that word reached the listeners', async () => {
    // Streamed slowly, word by word: the held-back start is what keeps NO_ANSWER off the listeners.
    standIn.answer = () => ({ text: 'NO_ANSWER here, sorry', paceMs: 50 })
    const talk = await Talk.open(bot, { userId: uid('kb-noanswer') })
    const frames = timeline(talk)
    try {
      const [answer] = await talk.ask('Is the museum open on Mondays?')
      expect(standIn.requests).toHaveLength(1)
      expect(frames.map((f) => f.type)).toEqual(['message_created', 'message_created'])
      expect((answer!.payload as { text: string }).text).toBe('I do not know that.')
      expect((answer as unknown as { metadata?: unknown }).metadata).toBeUndefined()
    } finally {
      await talk.close()
    }
  })

  it('a failing provider: the best passage with the sources of every passage given, never silence', async () => {
    standIn.answer = () => ({ fault: 'server-error' })
    const talk = await Talk.open(bot, { userId: uid('kb-fail') })
    try {
      const [answer] = await talk.ask('When does the museum open?')
      expect((answer!.payload as { text: string }).text).toMatch(new RegExp(`^${MUSEUM.replace(/[.]/g, '\\.')}\\n\\nSources: museum\\.md`))
      const citations = (answer as unknown as { metadata: { citations: { key: string }[] } }).metadata.citations
      expect(citations[0]!.key).toBe('museum.md')
      expect((await recordedCalls(h, bot.id)).at(-1)).toMatchObject({ via: 'knowledge', error: expect.stringMatching(/^upstream/) })
    } finally {
      await talk.close()
    }
  })

  it('a stream cut mid-way: the pieces already sent are aborted (message_stream_abort), then the best passage', async () => {
    // The first piece goes out, and is passed on (80 ms > the 30 ms pieces are gathered), before the cut.
    standIn.answer = () => ({ text: 'Open from ten every day except Monday, and the cafe until five.', fault: 'cut', paceMs: 80 })
    const talk = await Talk.open(bot, { userId: uid('kb-cut') })
    const frames = timeline(talk)
    try {
      const [answer] = await talk.ask('When does the museum open?')
      expect(frames.map((f) => f.type)).toEqual(['message_created', 'message_stream_delta', 'message_stream_abort', 'message_created'])
      expect(frames[1]!.data).toMatchObject({ sequence: 0, delta: 'Open ' })
      expect(frames[2]!.data).toEqual({ streamId: frames[1]!.data.streamId, conversationId: talk.conversationId })
      expect((answer!.payload as { text: string }).text.startsWith(MUSEUM)).toBe(true)
      expect((answer as unknown as { metadata: Record<string, unknown> }).metadata.streamId).toBeUndefined()
    } finally {
      await talk.close()
    }
  })
})

describe('knowledge card: PARLEY_KB_ANSWER_URL (the older setting) adds the provider kb-answer to the gateway', () => {
  let h: Harness
  let standIn: LlmStandIn
  let bot: TestBot

  beforeAll(async () => {
    standIn = await startLlmStandIn(() => ({ text: 'Composed: the museum opens at ten [1].' }))
    h = await startParley({ listen: true, config: STREAM_CONFIG, env: { PARLEY_KB_ANSWER_URL: standIn.url, PARLEY_KB_ANSWER_MODEL: 'stand-in-model', PARLEY_KB_ANSWER_API_KEY: 'sk-test' } })
    bot = await createBot(h, CODE)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
    await files.uploadFile({ key: 'museum.md', content: `# Museum\n\n${MUSEUM}`, index: true })
    await h.app.services.files.knowledge.idle()
  })
  afterAll(async () => {
    await h?.close()
    await standIn?.close()
  })

  it('the answer comes from that endpoint, with its model and key, recorded as the provider kb-answer', async () => {
    const talk = await Talk.open(bot, { userId: uid('kb-legacy') })
    try {
      expect(await talk.askText('When does the museum open?')).toEqual(['Composed: the museum opens at ten.\n\nSources: museum.md'])
      const request = standIn.requests.at(-1)!
      expect(request.headers.authorization).toBe('Bearer sk-test')
      expect(request.body.model).toBe('stand-in-model')
      expect((await recordedCalls(h, bot.id)).at(-1)).toMatchObject({ provider: 'kb-answer', model: 'stand-in-model', via: 'knowledge' })
    } finally {
      await talk.close()
    }
  })
})
