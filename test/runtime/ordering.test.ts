/**
 * Turn ordering: the turns of one conversation run one at a time in message order (50 fast
 * messages → 50 replies in the same order, each exactly once), while different conversations run
 * in parallel (a slow turn in one does not hold up another).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, listAll, Talk, textOf, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client, state }) {
    if (event.type !== 'text') return
    const text = event.payload.text
    if (text.startsWith('slow ')) {
      const until = Date.now() + Number(text.slice(5))
      while (Date.now() < until) {}
    }
    state.conversation.n = (state.conversation.n || 0) + 1
    await client.createMessage({ payload: { type: 'text', text: 'echo ' + text + ' #' + state.conversation.n } })
  },
}
`

describe('runtime: turn ordering', () => {
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
  })
  afterAll(async () => h?.close())

  it('50 fast messages in one conversation → 50 replies in the same order, each exactly once', async () => {
    const talk = await Talk.open(bot)
    try {
      const texts = Array.from({ length: 50 }, (_, i) => `m${i}`)
      for (const text of texts) await talk.say(text) // back to back, without waiting for replies
      const replies = await talk.botCount(50, 20_000)
      expect(replies.map(textOf)).toEqual(texts.map((t, i) => `echo ${t} #${i + 1}`))
      expect((await talk.quiet(300)).length).toBe(0)
      const stored = (await listAll(talk.user, talk.conversationId)).filter((m) => m.userId !== talk.user.user.id)
      expect(stored.map(textOf)).toEqual(texts.map((t, i) => `echo ${t} #${i + 1}`))
      expect(new Set(stored.map((m) => m.id)).size).toBe(50)
    } finally {
      await talk.close()
    }
  })

  it('50 concurrent messages: one reply each, in the order the messages were stored', async () => {
    const talk = await Talk.open(bot)
    try {
      const texts = Array.from({ length: 50 }, (_, i) => `c${i}`)
      await Promise.all(texts.map((t) => talk.say(t)))
      const replies = await talk.botCount(50, 20_000)
      const all = await listAll(talk.user, talk.conversationId)
      const storedOrder = all.filter((m) => m.userId === talk.user.user.id).map(textOf)
      expect(new Set(storedOrder)).toEqual(new Set(texts))
      expect(replies.map(textOf)).toEqual(storedOrder.map((t, i) => `echo ${t} #${i + 1}`))
      expect((await talk.quiet(300)).length).toBe(0)
    } finally {
      await talk.close()
    }
  })

  it('two conversations progress in parallel: a slow turn in one does not delay the other', async () => {
    const slow = await Talk.open(bot)
    const fast = await Talk.open(bot)
    try {
      const t0 = Date.now()
      await slow.say('slow 1500')
      await fast.say('quick one')
      const [fastReply] = await fast.botCount(1)
      const fastAt = fastReply!.receivedAt - t0
      const [slowReply] = await slow.botCount(1)
      const slowAt = slowReply!.receivedAt - t0
      expect(textOf(fastReply!)).toBe('echo quick one #1')
      expect(textOf(slowReply!)).toBe('echo slow 1500 #1')
      expect(slowAt).toBeGreaterThanOrEqual(1500)
      // Order, not a time budget: if turns ran one at a time, the quick reply would wait for the slow turn.
      expect(fastAt).toBeLessThan(slowAt)
      // the slow conversation's next message waits for its own previous turn only
      const replies = await Promise.all([slow.askText('after'), fast.askText('again')])
      expect(replies).toEqual([['echo after #2'], ['echo again #2']])
    } finally {
      await Promise.all([slow.close(), fast.close()])
    }
  })

  it('interleaved traffic in 5 conversations: each conversation gets its own replies, in its own order', async () => {
    const talks = await Promise.all(Array.from({ length: 5 }, () => Talk.open(bot)))
    try {
      for (let i = 0; i < 10; i++) await Promise.all(talks.map((t, k) => t.say(`k${k}-${i}`)))
      await Promise.all(talks.map((t) => t.botCount(10, 20_000)))
      talks.forEach((t, k) => expect(t.botTexts()).toEqual(Array.from({ length: 10 }, (_, i) => `echo k${k}-${i} #${i + 1}`)))
    } finally {
      await Promise.all(talks.map((t) => t.close()))
    }
  })
})
