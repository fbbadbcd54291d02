/* Running one card of a workflow node: say, execute, action, capture (its prompt), transition, knowledge, handoff. */
import { hostCall } from './host.js'
import { isArray, jsonParse, jsonStringify } from './intrinsics.js'
import { makeCtx, sendMessage } from './hooks.js'
import { searchKnowledge } from './client.js'
import { runAgentCard } from './agent.js'
import { sendAnswer } from './answer.js'
import { fail, unit } from './run.js'
import { bot, scopeOf, varsOf } from './state.js'
import { compileCode, compileExpr, render } from './templates.js'
import type { Card, Json, KnowledgeCard, Run, Step } from './types.js'
import { errText, pathKey, quote } from './util.js'

export async function runKnowledgeCard(rt: Run, event: Json, card: KnowledgeCard, where: string): Promise<void> {
  let answer: Json
  let query = ''
  try {
    const question = await unit(rt, () => render(card.question, scopeOf(rt, event), false))
    const args: Json = { query: typeof question === 'string' ? question : String(question), limit: card.limit }
    if (card.knowledgeBases) args.knowledgeBases = card.knowledgeBases
    if (card.minScore !== undefined) args.minScore = card.minScore
    query = args.query as string
    answer = await searchKnowledge(event, args)
  } catch (err) {
    fail(rt, where, err)
    return
  }
  if (card.output !== undefined) varsOf(rt, event)[card.output] = answer
  const results = answer.results as Json[]
  let text = card.noAnswer
  const message: Json = { payload: { type: 'text', text } }
  let streamId: unknown
  // The model found no answer in the passages: the card's no-answer path, as when none reached the threshold.
  let noAnswer = false
  if (results.length > 0) {
    let body = String(results[0]!.content)
    let citations: Json[] = []
    try {
      // Composed by the configured language model, if any (the host answers text null otherwise, and the citations
      // of the passages either way); its pieces went to the conversation's listeners under streamId.
      const args: Json = { question: query, results, guardrails: bot.guardrails ?? {} }
      if (typeof event.userId === 'string') args.userId = event.userId
      const composed = jsonParse(await hostCall('composeKnowledgeAnswer', jsonStringify(args))) as Json
      if (typeof composed.text === 'string' && composed.text !== '') body = composed.text
      if (isArray(composed.citations)) citations = composed.citations as Json[]
      streamId = composed.streamId
      noAnswer = composed.noAnswer === true
    } catch (err) {
      fail(rt, where, err)
    }
    const sources: string[] = []
    for (const c of citations) {
      const source = String(c.key) + (typeof c.pageNumber === 'number' ? ' (page ' + c.pageNumber + ')' : '')
      if (sources.indexOf(source) < 0) sources.push(source)
    }
    if (!noAnswer) {
      text = sources.length > 0 ? body + '\n\nSources: ' + sources.join(', ') : body
      message.payload = { type: 'text', text }
      const metadata: Json = { citations }
      if (typeof streamId === 'string') metadata.streamId = streamId
      message.metadata = metadata
    }
  }
  await sendAnswer(rt, event, where, message, streamId)
}

export function cardWhere(flowId: string, nodeId: string, index: number, type: string): string {
  return pathKey(pathKey('workflows', flowId) + '.nodes', nodeId) + '.cards[' + index + '] (' + type + ')'
}


/** Sends a card's payload (templates rendered in their own unit); failures are recorded. */
export async function say(rt: Run, event: Json, payload: Json, where: string): Promise<void> {
  let rendered: unknown
  try {
    rendered = await unit(rt, () => render(payload, scopeOf(rt, event), false))
  } catch (err) {
    fail(rt, where, new Error('template: ' + errText(err)))
    return
  }
  try {
    await sendMessage(rt, event, { payload: rendered }, true)
  } catch (err) {
    fail(rt, where, err)
  }
}

export async function runCard(rt: Run, event: Json, card: Card, where: string): Promise<Step> {
  switch (card.type) {
    case 'knowledge':
      await runKnowledgeCard(rt, event, card, where)
      return { kind: 'next' }
    case 'agent':
      return runAgentCard(rt, event, card, where)
    case 'say':
      await say(rt, event, card.payload, where)
      return { kind: 'next' }
    case 'handoff': {
      // Hands the conversation to a person and ends the flow: the user's next messages go to the agent.
      try {
        const args: Json = { conversationId: event.conversationId }
        if (typeof event.userId === 'string') args.userId = event.userId
        if (card.reason !== undefined) args.reason = await unit(rt, () => render(card.reason, scopeOf(rt, event), false))
        await hostCall('startHandoff', jsonStringify(args))
      } catch (err) {
        fail(rt, where, err)
      }
      return { kind: 'end' }
    }
    case 'execute': {
      const fn = compileCode(card.code)
      try {
        const ctx = makeCtx(rt, event)
        const sc = scopeOf(rt, event)
        await unit(rt, () => fn(event, sc.state, sc.vars, ctx.client, ctx.actions))
      } catch (err) {
        fail(rt, where, err)
      }
      return { kind: 'next' }
    }
    case 'action': {
      const fn = bot.actions.get(card.action)
      if (fn === undefined) {
        fail(rt, where, new Error('unknown action ' + quote(card.action)))
        return { kind: 'next' }
      }
      let input: unknown
      try {
        input = await unit(rt, () => render(card.input, scopeOf(rt, event), true))
      } catch (err) {
        fail(rt, where, new Error('input template: ' + errText(err)))
        return { kind: 'next' }
      }
      try {
        const ctx = makeCtx(rt, event)
        const output: unknown = await unit(rt, () => fn(ctx, input))
        if (card.output !== undefined) varsOf(rt, event)[card.output] = output
      } catch (err) {
        fail(rt, where, err)
      }
      return { kind: 'next' }
    }
    case 'capture':
      if (card.prompt) await say(rt, event, card.prompt, where)
      return { kind: 'wait' }
    case 'transition': {
      for (let i = 0; i < card.conditions.length; i++) {
        const cond = card.conditions[i]!
        try {
          const fn = compileExpr(cond.when)
          const hit: unknown = await unit(rt, () => {
            const sc = scopeOf(rt, event)
            return fn(sc.event, sc.state, sc.vars)
          })
          if (hit) return { kind: 'goto', node: cond.to }
        } catch (err) {
          fail(rt, where + ' conditions[' + i + ']', err)
        }
      }
      return card.else !== undefined ? { kind: 'goto', node: card.else } : { kind: 'next' }
    }
    default:
      return { kind: 'end' }
  }
}
