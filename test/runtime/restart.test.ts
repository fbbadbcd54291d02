/**
 * A run the sandbox starts again from the beginning (moved off a worker held by other code, or off one
 * that crashed) repeats its host calls: its replies must get the ids they had the first time, so the
 * user sees each once. Before the fix the turn's reply counter went on from where the first attempt
 * left it, and the repeated reply was a second message (seen in the containment suite: "expected 2 to
 * be 1"). The sandbox here is a test double of BotSandbox that plays exactly that sequence (the real
 * pool's moves are timing-dependent); the rest — runtime, store, stream — is the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BotSandbox, CheckResult, SandboxHost, SandboxRun } from '../../src/runtime/sandbox.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, sleep, STREAM_CONFIG, Talk } from './helpers.js'

/** Each turn: replies, is "moved" (restarted), replies again from the beginning, plus a second reply. */
class RestartingSandbox implements BotSandbox {
  async check(): Promise<CheckResult> {
    return { ok: true, summary: { hooks: ['afterIncoming'], actions: [], workflows: [] } }
  }

  async run(request: SandboxRun, host: SandboxHost): Promise<string> {
    const input = JSON.parse(request.input) as { event: { conversationId: string; state: unknown; type: string } }
    if (request.entry !== 'turn') return JSON.stringify({ stop: false })
    // the conversation's start (its own turn since the conversation-start fix) is not what this test plays
    if (input.event.type === 'conversationStarted') return JSON.stringify({ state: input.event.state, flow: null, errors: [] })
    const reply = (text: string) => host.call('createMessage', { conversationId: input.event.conversationId, payload: { type: 'text', text } })
    await reply('first')
    await host.call('createEvent', { conversationId: input.event.conversationId, payload: { note: 'first event' } })
    host.restarted?.()
    await reply('first')
    await host.call('createEvent', { conversationId: input.event.conversationId, payload: { note: 'first event' } })
    await reply('second')
    return JSON.stringify({ state: input.event.state, flow: null, errors: [] })
  }

  async close(): Promise<void> {}
}

describe('runtime: a run started again from the beginning', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG, sandbox: new RestartingSandbox() })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('sends each of its replies and events once', async () => {
    const bot = await createBot(h, 'export const hooks = { afterIncoming() {} }')
    const talk = await Talk.open(bot)
    try {
      await talk.say('hello')
      await talk.botCount(2)
      await sleep(300) // a duplicate would arrive right behind
      expect(talk.botTexts()).toEqual(['first', 'second'])
      expect(talk.events.filter((e) => e.isBot).map((e) => e.payload)).toEqual([{ note: 'first event' }])
    } finally {
      await talk.close()
    }
  })
})
