/*
 * The agent card (docs/bot-code.md "agent"): the configured language model answers the user, with the card's
 * instructions and the bot's guardrails, the knowledge passages found for the user's message, the bot's actions as
 * tools and, when allowed, a handoff to a person. Each step is the host's (agentStep: the model, the conversation's
 * memory, the streaming); the loop, its bound and the tools run here, each tool in its own unit of user code.
 */
import { hostCall, log } from './host.js'
import { isArray, jsonParse, jsonStringify, now } from './intrinsics.js'
import { makeCtx, sendMessage } from './hooks.js'
import { searchKnowledge } from './client.js'
import { fail, unit } from './run.js'
import { bot } from './state.js'
import type { AgentCard, Json, Run, Step } from './types.js'
import { errText, isObj } from './util.js'
import { previewText, sendAnswer } from './answer.js'

/** The tool the model hands the conversation to a person with (src/domain/agent/agent-steps.ts HANDOFF_TOOL). */
const HANDOFF_TOOL = 'handoff_to_human'
/** The most of a tool's result the model is given, in characters of JSON. */
const TOOL_RESULT_CHARS = 20_000
const PASSAGES = 5
/** How much of a tool's input and output its log line shows. */
const TRACE_CHARS = 300
const clipped = (text: string) => (text.length > TRACE_CHARS ? text.slice(0, TRACE_CHARS) + '…' : text)

export async function runAgentCard(rt: Run, event: Json, card: AgentCard, where: string): Promise<Step> {
  let passages: Json[] = []
  if (card.knowledge !== undefined) {
    try {
      // Without the relevance threshold (minScore 0): it spares a knowledge card a model call, which the agent makes
      // anyway, and the model judges whether a passage helps (bench/RESULTS.md "agent": 81.7 % recall, 76.4 % with it).
      const args: Json = { query: previewText(event), limit: PASSAGES, minScore: 0 }
      if (isArray(card.knowledge)) args.knowledgeBases = card.knowledge
      passages = (await searchKnowledge(event, args)).results as Json[]
    } catch (err) {
      fail(rt, where, err)
    }
  }
  const tools = card.tools.map((t) => {
    const declared = bot.actionInfo.get(t.action) ?? {}
    return {
      name: t.action,
      description: t.description ?? declared.description ?? 'The bot action ' + t.action,
      parameters: t.input ?? declared.input ?? { type: 'object', properties: {} },
    }
  })
  const steps: Json[] = []
  for (let i = 0; i < card.maxSteps; i++) {
    let out: Json
    try {
      const args: Json = { instructions: card.instructions, passages, tools, handoff: card.handoff, steps, guardrails: bot.guardrails ?? {} }
      if (card.model !== undefined) args.model = card.model
      if (typeof event.userId === 'string') args.userId = event.userId
      out = jsonParse(await hostCall('agentStep', jsonStringify(args))) as Json
    } catch (err) {
      fail(rt, where, err)
      break
    }
    if (out.kind === 'answer') {
      await answer(rt, event, where, out)
      return { kind: 'next' }
    }
    if (out.kind !== 'tools') {
      fail(rt, where, new Error('the model failed: ' + String(out.error)))
      break
    }
    const calls = (isArray(out.toolCalls) ? out.toolCalls : []) as Json[]
    steps.push({ role: 'assistant', content: null, toolCalls: calls })
    for (const call of calls) {
      if (call.name === HANDOFF_TOOL && card.handoff) {
        try {
          const args: Json = { conversationId: event.conversationId }
          if (typeof event.userId === 'string') args.userId = event.userId
          if (isObj(call.input) && typeof call.input.reason === 'string') args.reason = call.input.reason.slice(0, 500)
          await hostCall('startHandoff', jsonStringify(args))
          return { kind: 'end' }
        } catch (err) {
          fail(rt, where, err)
          return fallback(rt, event, card, where)
        }
      }
      const fn = card.tools.some((t) => t.action === call.name) ? bot.actions.get(String(call.name)) : undefined
      let content: string
      if (fn === undefined) {
        content = jsonStringify({ error: 'There is no tool named ' + String(call.name) })
      } else {
        const started = now()
        try {
          const output: unknown = await unit(rt, () => fn(makeCtx(rt, event), call.input))
          content = jsonStringify(output === undefined ? null : output)
          // The turn's trace (the console shows a turn's logs under its message): what the model asked, what it got.
          log('info', 'agent tool ' + String(call.name) + ' ' + clipped(jsonStringify(call.input ?? null)) + ' → ' + clipped(content) + ' (' + (now() - started) + ' ms)')
        } catch (err) {
          // A tool that failed ends the card: its fallback, never a made-up answer.
          fail(rt, where + ' tool ' + String(call.name), err)
          return fallback(rt, event, card, where)
        }
      }
      steps.push({ role: 'tool', toolCallId: call.id, content: content.length > TOOL_RESULT_CHARS ? content.slice(0, TOOL_RESULT_CHARS) + '…(cut)' : content })
    }
  }
  if (steps.length > 0 && rt.errors.length === 0) fail(rt, where, new Error('no answer after ' + card.maxSteps + ' steps (maxSteps)'))
  return fallback(rt, event, card, where)
}

/** The model's answer as the bot's message: its citations, and the id of the stream its pieces went out under. */
async function answer(rt: Run, event: Json, where: string, out: Json): Promise<void> {
  const metadata: Json = {}
  if (isArray(out.citations) && out.citations.length > 0) metadata.citations = out.citations
  if (typeof out.streamId === 'string') metadata.streamId = out.streamId
  await sendAnswer(rt, event, where, { payload: { type: 'text', text: String(out.text) }, metadata }, out.streamId)
}

async function fallback(rt: Run, event: Json, card: AgentCard, where: string): Promise<Step> {
  try {
    await sendMessage(rt, event, { payload: { type: 'text', text: card.fallback } }, true)
  } catch (err) {
    fail(rt, where, new Error('fallback: ' + errText(err)))
  }
  return { kind: 'next' }
}
