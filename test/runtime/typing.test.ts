/**
 * The typing indicator on the conversation's stream: while a bot turn runs (once it has run 300 ms), keep-alive frames say
 * `{"type":"ping","data":{"typing":true}}`, and `typing: false` once it ends; bot code can start one
 * (client.startTypingIndicator, with a timeout after which the stream says false) and stop it. The official
 * `@botpress/chat@0.5.5` listener keeps working meanwhile: it gets every message and no frame it cannot parse
 * other than the keep-alives it already ignores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { SseStream } from '../e2e/sse-reader.js'
import { WebchatSession } from '../helpers/webchat-api.js'
import { TYPING_DELAY_MS } from '../../src/runtime/turn-scheduler.js'
import { createBot, Talk, textOf, STREAM_CONFIG, WAIT_MS, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    const t = event.payload.text
    if (t === 'slow') {
      const until = Date.now() + 1200
      while (Date.now() < until) {}
      await client.createMessage({ payload: { type: 'text', text: 'slow answer' } })
      return
    }
    if (t.startsWith('type-in ')) {
      await client.startTypingIndicator({ conversationId: t.slice(8), timeout: 700 })
      await client.createMessage({ payload: { type: 'text', text: 'started' } })
      return
    }
    if (t.startsWith('stop-in ')) {
      await client.startTypingIndicator({ conversationId: t.slice(8), timeout: 60000 })
      await client.stopTypingIndicator({ conversationId: t.slice(8) })
      await client.createMessage({ payload: { type: 'text', text: 'stopped' } })
      return
    }
    if (t === 'bad-timeout') {
      try { await client.startTypingIndicator({ timeout: -5 }) } catch (err) { await client.createMessage({ payload: { type: 'text', text: String(err.message) } }) }
      return
    }
    await client.createMessage({ payload: { type: 'text', text: 'echo ' + t } })
  },
}
`

type Frame = { type: string; data: Record<string, unknown> }

/** A raw stream of the talk's conversation, as the same user: every frame, parsed. */
async function rawStream(bot: TestBot, talk: Talk): Promise<SseStream> {
  const stream = await SseStream.open(`${bot.url}/conversations/${talk.conversationId}/listen`, { headers: { 'x-user-key': talk.user.user.key } })
  expect(stream.status).toBe(200)
  return stream
}

const signals = (stream: SseStream): Frame[] => stream.frames.map((f) => f.json as Frame).filter((f) => f && typeof f === 'object')
const typingStates = (stream: SseStream) => signals(stream).filter((f) => f.type === 'ping' && typeof f.data.typing === 'boolean').map((f) => f.data.typing as boolean)

async function until(what: string, check: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('typing indicator', () => {
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
  })
  afterAll(async () => {
    await h?.close()
  })

  it('a running turn says typing: true on the stream, then false; the official listener gets the answer and nothing it cannot parse', async () => {
    const talk = await Talk.open(bot)
    const stream = await rawStream(bot, talk)
    try {
      const [answer] = await talk.askText('slow')
      expect(answer).toBe('slow answer')
      await until('typing: false', () => typingStates(stream).includes(false))
      const frames = signals(stream)
      const on = frames.findIndex((f) => f.type === 'ping' && f.data.typing === true)
      const reply = frames.findIndex((f) => f.type === 'message_created' && textOf(f.data as never) === 'slow answer')
      const off = frames.findIndex((f) => f.type === 'ping' && f.data.typing === false)
      expect(on, JSON.stringify(frames)).toBeGreaterThanOrEqual(0)
      expect(on).toBeLessThan(reply) // typing showed before the answer arrived
      expect(off).toBeGreaterThan(on)
      // Only the keep-alive type carries it: no new signal type on the wire.
      expect(new Set(frames.map((f) => f.type))).toEqual(new Set(['ping', 'message_created']))
      expect(talk.unknown).toEqual([])
      expect(talk.errors).toEqual([])
    } finally {
      await stream.close()
      await talk.listener.disconnect()
    }
  })

  it(`a turn quicker than ${TYPING_DELAY_MS} ms sends no typing frames: its answer comes alone`, async () => {
    const talk = await Talk.open(bot)
    const stream = await rawStream(bot, talk)
    try {
      for (const text of ['one', 'two', 'three']) expect(await talk.askText(text)).toEqual([`echo ${text}`])
      await until('the three answers on the raw stream', () => signals(stream).filter((f) => f.type === 'message_created').length === 6)
      // The last turn's stop would follow its answer at once: give it the time a late frame would take.
      await new Promise((r) => setTimeout(r, 100))
      expect(typingStates(stream)).toEqual([])
    } finally {
      await stream.close()
      await talk.listener.disconnect()
    }
  })

  it('Botpress\'s webchat API says it with its own signals: typing_started (with its timeout), the answer, typing_stopped', async () => {
    const webchat = await WebchatSession.open(h.baseUrl, bot.webhookId)
    const stream = webchat.stream
    try {
      expect((await webchat.send({ type: 'text', text: 'slow' })).status).toBe(201)
      const kinds = () => webchat.signals().filter((f) => ['typing_started', 'typing_stopped', 'message_created'].includes(f.type))
      await stream.waitUntil(() => kinds().some((f) => f.type === 'typing_stopped'), WAIT_MS)
      const order = kinds().filter((f) => f.type !== 'message_created' || textOf(f.data as never) === 'slow answer')
      expect(order.map((f) => f.type).filter((t, i, all) => t !== all[i - 1])).toEqual(['typing_started', 'message_created', 'typing_stopped'])
      expect(order[0]!.data.timeout).toBeGreaterThan(0)
      // Not the Chat API's keep-alive form.
      expect(stream.frames.some((f) => (f.json as Frame | undefined)?.type === 'ping' && typeof (f.json as Frame).data.typing === 'boolean')).toBe(false)
    } finally {
      await stream.close()
    }
  })

  it('bot code starts a typing indicator in another conversation; it ends by its timeout, or by stopTypingIndicator', async () => {
    const driver = await Talk.open(bot)
    const watched = await Talk.open(bot)
    const stream = await rawStream(bot, watched)
    try {
      // The driver's user is not a participant of `watched`'s conversation, but the bot owns every conversation of its integration.
      expect(await driver.askText(`type-in ${watched.conversationId}`)).toEqual(['started'])
      await until('typing: true', () => typingStates(stream).includes(true))
      await until('typing: false after the timeout', () => typingStates(stream).at(-1) === false)
      const before = typingStates(stream).length
      expect(await driver.askText(`stop-in ${watched.conversationId}`)).toEqual(['stopped'])
      await until('typing: true then false', () => typingStates(stream).slice(before).join() === 'true,false')
      expect(await driver.askText('bad-timeout')).toEqual([expect.stringMatching(/timeout must be a positive number/)])
      expect(watched.unknown).toEqual([])
      expect(watched.messages).toEqual([])
    } finally {
      await stream.close()
      await Promise.all([driver.listener.disconnect(), watched.listener.disconnect()])
    }
  })
})
