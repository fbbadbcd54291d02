/**
 * The agent card (issue #29 items 2 and 5; docs/bot-code.md "agent"): the configured model answers the user with the
 * card's instructions and the bot's guardrails, the knowledge passages found for the message (cited), the
 * conversation's recent messages, the bot's actions as tools (run in the sandbox, their results given back) and a
 * handoff to a person. Bounded by maxSteps, the run's time and the bot's LLM budget; a model or tool failure ends in
 * the card's fallback, never silence. No model can run here: the model is the tests' OpenAI-compatible stand-in
 * (test/helpers/llm-stand-in.ts), scripted per test; its requests are inspected.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/harness.js'
import { parleyWithStandIn, recordedCalls, type LlmStandIn, type StandInRequest } from '../helpers/llm-stand-in.js'
import { adminClient, createBot, STREAM_CONFIG, Talk, timeline, uid, waitForLog, type TestBot } from './helpers.js'

const CODE = String.raw`
export const guardrails = { instructions: 'You are Mona, the museum assistant.', refuse: ['politics'], maxAnswerChars: 120 }
export const actions = {
  lookupOrder: {
    description: 'Find a ticket order by its number',
    input: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    handler: async (ctx, { orderId }) => {
      if (orderId === 'boom') throw new Error('the order system is down')
      return { orderId, status: 'paid', visitors: 2 }
    },
  },
}
export const workflows = {
  help: {
    trigger: { type: 'message' },
    nodes: { a: { cards: [{ type: 'agent', instructions: 'Help visitors with tickets and opening hours.', knowledge: true, tools: ['lookupOrder'], handoff: true, maxSteps: 3, fallback: 'Sorry, something went wrong; please try again.' }] } },
  },
}
`
const MUSEUM = 'The museum opens at 10:00 every day except Monday.'

type Message = { role: string; content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }
const messagesOf = (r: StandInRequest) => r.body.messages as Message[]
const toolResults = (r: StandInRequest) => messagesOf(r).filter((m) => m.role === 'tool')

describe('agent card: a model with knowledge, tools, handoff and guardrails', () => {
  let llm: Awaited<ReturnType<typeof parleyWithStandIn>>
  let h: Harness
  let standIn: LlmStandIn
  let bot: TestBot

  beforeAll(async () => {
    // A relevance threshold no passage reaches: the agent's search does not apply it (the model judges the passages).
    llm = await parleyWithStandIn((url) => [{ name: 'local', kind: 'openai', url, models: ['agent-model'] }], { config: STREAM_CONFIG, env: { PARLEY_KB_MIN_SCORE: '0.99' } })
    ;({ h, standIn } = llm)
    bot = await createBot(h, CODE)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
    await files.uploadFile({ key: 'hours.md', content: `# Opening hours\n\n${MUSEUM}`, index: true })
    await h.app.services.files.knowledge.idle()
  })
  afterAll(async () => llm?.close())
  beforeEach(() => llm.fresh())

  it('the prompt: guardrails, instructions, the passages found, the conversation so far; the answer cites the passage', async () => {
    // With passages in the prompt, an answer citing the first; without (a greeting finds none), a plain one.
    standIn.answer = (r) => ({ text: String(messagesOf(r)[0]!.content).includes('Passages:') ? 'We open at 10:00 [1].' : 'Hello! How can I help?' })
    const talk = await Talk.open(bot, { userId: uid('agent') })
    try {
      expect(await talk.askText('Hello there')).toEqual(['Hello! How can I help?'])
      const [answer] = await talk.ask('When does the museum open?')
      expect((answer!.payload as { text: string }).text).toBe('We open at 10:00.')
      expect((answer as unknown as { metadata: { citations: { key: string }[] } }).metadata.citations.map((c) => c.key)).toEqual(['hours.md'])
      const request = standIn.requests[1]!
      expect(request.body.model).toBe('agent-model')
      const [system, ...rest] = messagesOf(request)
      expect(system!.role).toBe('system')
      expect(system!.content).toContain('You are Mona, the museum assistant.')
      expect(system!.content).toMatch(/Do not discuss these topics.*politics/)
      expect(system!.content).toContain('under 120 characters')
      expect(system!.content).toContain('Help visitors with tickets and opening hours.')
      expect(system!.content).toContain(MUSEUM)
      // Memory: the first exchange, then the question.
      expect(rest.map((m) => [m.role, m.content])).toEqual([['user', 'Hello there'], ['assistant', 'Hello! How can I help?'], ['user', 'When does the museum open?']])
      expect(request.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['lookupOrder', 'handoff_to_human'])
      expect(request.body.tools[0].function).toMatchObject({ description: 'Find a ticket order by its number', parameters: { required: ['orderId'] } })
      expect((await recordedCalls(h, bot.id)).at(-1)).toMatchObject({ via: 'agent', promptSource: 'agent-card', conversationId: talk.conversationId })
    } finally {
      await talk.close()
    }
  })

  it('the knowledge search applies no relevance threshold: a weakly related passage (relevance ~0.35, under this server\'s 0.99) still reaches the prompt', async () => {
    standIn.answer = () => ({ text: 'Yes, on Mondays.' })
    const talk = await Talk.open(bot, { userId: uid('agent-weak') })
    try {
      expect(await talk.askText('Is it closed some days?')).toEqual(['Yes, on Mondays.'])
      expect(String(messagesOf(standIn.requests[0]!)[0]!.content)).toContain(MUSEUM)
    } finally {
      await talk.close()
    }
  })

  it('memory starts with the user\'s turn: a greeting the bot sent first is left out (Anthropic\'s API requires it)', async () => {
    const greeter = await createBot(h, `export const workflows = {
  hello: { trigger: { type: 'conversationStarted' }, nodes: { a: { cards: [{ type: 'say', text: 'Welcome!' }] } } },
  help: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'agent', instructions: 'Help.' }] } } },
}`)
    standIn.answer = () => ({ text: 'Sure.' })
    const talk = await Talk.open(greeter, { userId: uid('agent-greeted') })
    try {
      await talk.botCount(1)
      expect(talk.botTexts()).toEqual(['Welcome!'])
      expect(await talk.askText('Can you help?')).toEqual(['Sure.'])
      expect(messagesOf(standIn.requests[0]!).slice(1).map((m) => [m.role, m.content])).toEqual([['user', 'Can you help?']])
    } finally {
      await talk.close()
    }
  })

  it('a tool call runs the action in the sandbox and its result reaches the model, which answers with it', async () => {
    standIn.answer = (r) => toolResults(r).length === 0
      ? { toolCalls: [{ id: 'call_1', name: 'lookupOrder', arguments: { orderId: 'A42' } }] }
      : { text: `Your order ${JSON.parse(toolResults(r)[0]!.content!).orderId} is paid.` }
    const talk = await Talk.open(bot, { userId: uid('agent-tool') })
    try {
      expect(await talk.askText('What about my order A42?')).toEqual(['Your order A42 is paid.'])
      expect(standIn.requests).toHaveLength(2)
      const second = messagesOf(standIn.requests[1]!)
      expect(second.find((m) => m.role === 'assistant' && m.tool_calls)?.tool_calls?.[0]).toMatchObject({ id: 'call_1', function: { name: 'lookupOrder' } })
      expect(toolResults(standIn.requests[1]!)).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ orderId: 'A42', status: 'paid', visitors: 2 }) }])
    } finally {
      await talk.close()
    }
  })

  it('streams its answer (message_stream_delta in order, then complete before the message); a step that calls tools streams nothing', async () => {
    standIn.answer = (r) => toolResults(r).length === 0
      ? { text: 'Let me look that up.', toolCalls: [{ id: 'call_s', name: 'lookupOrder', arguments: { orderId: 'S1' } }], paceMs: 40 }
      : { text: 'Order S1 is paid, for 2 visitors.', paceMs: 40 }
    const talk = await Talk.open(bot, { userId: uid('agent-stream') })
    const frames = timeline(talk)
    try {
      const [answer] = await talk.ask('Order S1?')
      expect((answer!.payload as { text: string }).text).toBe('Order S1 is paid, for 2 visitors.')
      const deltas = frames.filter((f) => f.type === 'message_stream_delta')
      // The tool step's words ("Let me look that up.") were aborted, never shown as the answer.
      const streams = [...new Set(deltas.map((d) => d.data.streamId as string))]
      const final = (answer as unknown as { metadata: { streamId: string } }).metadata.streamId
      expect(streams.at(-1)).toBe(final)
      const finalDeltas = deltas.filter((d) => d.data.streamId === final)
      expect(finalDeltas.map((d) => d.data.sequence)).toEqual(finalDeltas.map((_, i) => i))
      expect(finalDeltas.map((d) => d.data.delta).join('')).toBe('Order S1 is paid, for 2 visitors.')
      for (const id of streams.slice(0, -1)) expect(frames.some((f) => f.type === 'message_stream_abort' && f.data.streamId === id)).toBe(true)
      const types = frames.map((f) => f.type)
      expect(types.slice(types.lastIndexOf('message_stream_delta') + 1)).toEqual(['message_stream_complete', 'message_created'])
    } finally {
      await talk.close()
    }
  })

  it('the turn trace: the transcript has the turn\'s model calls (for whoever reads the conversation) and its tool calls in the bot log (for roles that read bots)', async () => {
    standIn.answer = (r) => toolResults(r).length === 0
      ? { toolCalls: [{ id: 'call_t', name: 'lookupOrder', arguments: { orderId: 'T7' } }] }
      : { text: 'Order T7 is paid.' }
    const talk = await Talk.open(bot, { userId: uid('agent-trace') })
    try {
      expect(await talk.askText('Order T7?')).toEqual(['Order T7 is paid.'])
      const transcript = async (token: string) => {
        const res = await fetch(`${h.baseUrl}/v1/admin/bots/${bot.id}/conversations/${talk.conversationId}/transcript`, {
          headers: { authorization: `Bearer ${token}`, 'x-workspace-id': h.credentials.workspaceId },
        })
        expect(res.status).toBe(200)
        return (await res.json()) as { llmCalls: Record<string, unknown>[]; logs: { level: string; message: string }[] }
      }
      await waitForLog(h, bot.id, (l) => l.message.startsWith('agent tool lookupOrder'))
      const owner = await transcript(h.credentials.token)
      expect(owner.llmCalls).toHaveLength(2)
      expect(owner.llmCalls.every((c) => c.via === 'agent' && c.provider === 'local' && c.model === 'agent-model' && typeof c.latencyMs === 'number')).toBe(true)
      expect(owner.llmCalls[0]!.inputTokens).toBeGreaterThan(0)
      expect(owner.llmCalls[1]!.outputTokens).toBe(4) // "Order T7 is paid." is 4 words: the stand-in's tokens
      const tool = owner.logs.find((l) => l.message.startsWith('agent tool lookupOrder'))
      expect(tool?.message).toMatch(/^agent tool lookupOrder \{"orderId":"T7"\} → \{"orderId":"T7","status":"paid","visitors":2\} \(\d+ ms\)$/)
      // An agent (a person answering handoffs) reads the conversation and what it cost, not the bot's workings.
      const member = await fetch(`${h.baseUrl}/v1/admin/workspace-members`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `${uid('trace-agent')}@example.com`, role: 'agent' }),
      })
      const agent = await transcript(((await member.json()) as { pat: { value: string } }).pat.value)
      expect(agent.llmCalls).toHaveLength(2)
      expect(agent.logs).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('handoff: the model hands the conversation to a person; the flow ends', async () => {
    standIn.answer = () => ({ toolCalls: [{ id: 'call_h', name: 'handoff_to_human', arguments: { reason: 'wants a refund' } }] })
    const talk = await Talk.open(bot, { userId: uid('agent-handoff') })
    try {
      await talk.say('I want to talk to a person about a refund')
      const integration = (await h.store.getIntegrationByWebhookId(bot.webhookId))!
      await expect.poll(() => h.app.services.handoffs.isHandedOff(integration.id, talk.conversationId), { timeout: 10_000 }).toBe(true)
      const open = await h.store.handoffs.getOpen(integration.id, talk.conversationId)
      expect(open?.reason).toBe('wants a refund')
    } finally {
      await talk.close()
    }
  })

  it('bounded: a model that keeps calling tools gets the fallback after maxSteps, and the bot log says why', async () => {
    let n = 0
    standIn.answer = () => ({ toolCalls: [{ id: `call_${++n}`, name: 'lookupOrder', arguments: { orderId: String(n) } }] })
    const talk = await Talk.open(bot, { userId: uid('agent-steps') })
    try {
      expect(await talk.askText('Loop please')).toEqual(['Sorry, something went wrong; please try again.'])
      expect(standIn.requests).toHaveLength(3)
      await waitForLog(h, bot.id, (l) => /no answer after 3 steps \(maxSteps\)/.test(l.message))
    } finally {
      await talk.close()
    }
  })

  it('a failing tool, a failing provider, a spent budget: the fallback, never silence', async () => {
    const talk = await Talk.open(bot, { userId: uid('agent-fail') })
    try {
      standIn.answer = () => ({ toolCalls: [{ id: 'call_b', name: 'lookupOrder', arguments: { orderId: 'boom' } }] })
      expect(await talk.askText('order boom?')).toEqual(['Sorry, something went wrong; please try again.'])
      await waitForLog(h, bot.id, (l) => l.message.includes('the order system is down'))
      standIn.answer = () => ({ fault: 'server-error' })
      expect(await talk.askText('anything?')).toEqual(['Sorry, something went wrong; please try again.'])
      await waitForLog(h, bot.id, (l) => /the model failed: .*answered HTTP 500/.test(l.message))
      const usage = h.app.services.llmUsage
      await usage.updateBotBudget(h.credentials.workspaceId, bot.id, { dailyTokens: 1 })
      standIn.reset()
      try {
        expect(await talk.askText('and now?')).toEqual(['Sorry, something went wrong; please try again.'])
        expect(standIn.requests).toEqual([])
        await waitForLog(h, bot.id, (l) => /the model failed: .*daily LLM tokens budget is spent/.test(l.message))
      } finally {
        await usage.updateBotBudget(h.credentials.workspaceId, bot.id, { dailyTokens: null })
      }
    } finally {
      await talk.close()
    }
  })

  it('guardrails: the answer is cut at maxAnswerChars, and the model is asked for no more tokens than that', async () => {
    standIn.answer = () => ({ text: 'The museum opens at ten. It closes at six. The cafe is on the first floor and serves coffee, tea and cakes all day long, every day.' })
    const talk = await Talk.open(bot, { userId: uid('agent-long') })
    try {
      const [text] = await talk.askText('Tell me everything')
      expect(text!.length).toBeLessThanOrEqual(120)
      // Cut at the last word end before the limit (the last sentence end is too far back), with an ellipsis.
      expect(text).toBe('The museum opens at ten. It closes at six. The cafe is on the first floor and serves coffee, tea and cakes all day…')
      expect(standIn.requests[0]!.body.max_tokens).toBe(40)
    } finally {
      await talk.close()
    }
  })

  it('a card naming an unknown action or a bad tool is refused when the bot is deployed, with the place and the reason', async () => {
    const admin = adminClient(h)
    const bad = (card: string) => admin.updateBot({ id: bot.id, code: `export const actions = { ok: async () => 1, 'bad name': async () => 2 }\nexport const workflows = { w: { trigger: { type: 'message' }, nodes: { a: { cards: [${card}] } } } }` })
    await expect(bad(`{ type: 'agent', instructions: 'x', tools: ['nope'] }`)).rejects.toThrow(/workflows\.w\.nodes\.a\.cards\[0\]\.tools\[0\]: unknown action "nope"/)
    await expect(bad(`{ type: 'agent', instructions: 'x', tools: ['bad name'] }`)).rejects.toThrow(/cannot be a tool name/)
    await expect(bad(`{ type: 'agent', instructions: 'x', maxSteps: 50 }`)).rejects.toThrow(/maxSteps must be an integer from 1 to 10/)
    await expect(bad(`{ type: 'agent' }`)).rejects.toThrow(/instructions/)
  })
})
