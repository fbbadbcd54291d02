/**
 * Conversations in a closed loop (each user answers the bot's reply at once, many conversations at
 * the same time), with the runtime's periodic sweep pushed out to an hour: every message must get
 * its turn from its own notification. A notification dropped by the scheduler (one arriving while a
 * conversation's drain loop was ending) left its turn to the sweep; here that reply never comes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, Talk, STREAM_CONFIG, type TestBot } from './helpers.js'

const ECHO = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: 'echo ' + event.payload.text } })
  },
}
`

describe('runtime: closed loop without the sweep', () => {
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, botSweepMs: 3_600_000 } })
    bot = await createBot(h, ECHO)
  })
  afterAll(async () => h?.close())

  it('20 conversations × 15 messages, each sent as soon as the previous reply arrives: every reply comes', async () => {
    const talks = await Promise.all(Array.from({ length: 20 }, () => Talk.open(bot)))
    try {
      const answers = await Promise.all(talks.map(async (talk, k) => {
        const got: string[] = []
        for (let i = 0; i < 15; i++) got.push(...(await talk.askText(`t${k}-${i}`)))
        return got
      }))
      answers.forEach((got, k) => expect(got).toEqual(Array.from({ length: 15 }, (_, i) => `echo t${k}-${i}`)))
    } finally {
      await Promise.all(talks.map((t) => t.close()))
    }
  }, 120_000)
})
