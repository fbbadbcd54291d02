/* Workflows: the trigger an event starts, a flow run from node to node, and a waiting capture resumed. */
import { log } from './host.js'
import { floor } from './intrinsics.js'
import { cardWhere, runCard, say } from './cards.js'
import { previewText } from './answer.js'
import { fail, unit } from './run.js'
import { bot, varsOf } from './state.js'
import type { CaptureCard, Json, Run, Waiting } from './types.js'
import { isHandoffEvent, isObj, pathKey, toText } from './util.js'

const MAX_NODE_VISITS = 100

/** Runs a flow from a position until it ends (null) or waits on a capture (the position to persist). */
export async function runFlow(rt: Run, event: Json, flowId: string, nodeId: string, cardIndex: number): Promise<Waiting | null> {
  const flow = bot.flows.get(flowId)
  if (flow === undefined) return null
  let current = nodeId
  let index = cardIndex
  for (;;) {
    rt.visits++
    if (rt.visits > MAX_NODE_VISITS) {
      fail(rt, pathKey('workflows', flowId), new Error('more than ' + MAX_NODE_VISITS + ' node visits in one turn (a transition loop?); the flow was ended'))
      return null
    }
    const node = flow.nodes.get(current)
    if (node === undefined) return null
    let jump: string | undefined
    for (let i = index; i < node.cards.length; i++) {
      const card = node.cards[i]!
      const step = await runCard(rt, event, card, cardWhere(flowId, current, i, card.type))
      if (step.kind === 'wait') return { flowId, nodeId: current, cardIndex: i, waiting: 'capture', retries: 0 }
      if (step.kind === 'end') return null
      if (step.kind === 'goto') {
        jump = step.node
        break
      }
    }
    index = 0
    if (jump === undefined) jump = node.next
    if (jump === undefined) return null
    current = jump
  }
}

/** The saved position if it still designates a capture card of the deployed code, else null. */
export function waitingCapture(flow: unknown): { pos: Waiting; card: CaptureCard } | null {
  if (flow === null || flow === undefined) return null
  if (isObj(flow) && flow.waiting === 'capture' && typeof flow.flowId === 'string' && typeof flow.nodeId === 'string' && typeof flow.cardIndex === 'number') {
    const card = bot.flows.get(flow.flowId)?.nodes.get(flow.nodeId)?.cards[flow.cardIndex]
    if (card && card.type === 'capture') {
      const retries = typeof flow.retries === 'number' && flow.retries >= 0 ? floor(flow.retries) : 0
      return { pos: { flowId: flow.flowId, nodeId: flow.nodeId, cardIndex: flow.cardIndex, waiting: 'capture', retries }, card }
    }
  }
  log('warn', 'the saved workflow position ' + toText(flow) + ' does not match the deployed workflows; it was dropped')
  return null
}

export function checkCapture(card: CaptureCard, text: string): { ok: boolean; value?: unknown } {
  if (text === '') return { ok: false }
  switch (card.validate) {
    case 'number': {
      const n = Number(/^[-+]?\d+,\d+$/.test(text) ? text.replace(',', '.') : text)
      return n === n && n !== Infinity && n !== -Infinity ? { ok: true, value: n } : { ok: false }
    }
    case 'email':
      return /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/.test(text) ? { ok: true, value: text } : { ok: false }
    case 'pattern': {
      const re = card.regex!
      re.lastIndex = 0
      return re.test(text) ? { ok: true, value: text } : { ok: false }
    }
    default:
      return { ok: true, value: text }
  }
}

export async function resumeCapture(rt: Run, event: Json, pos: Waiting, card: CaptureCard): Promise<Waiting | null> {
  const where = cardWhere(pos.flowId, pos.nodeId, pos.cardIndex, 'capture')
  const text = previewText(event).trim()
  let check: { ok: boolean; value?: unknown } = { ok: false }
  try {
    check = await unit(rt, () => checkCapture(card, text))
  } catch (err) {
    fail(rt, where, err)
  }
  if (check.ok) varsOf(rt, event)[card.variable] = check.value
  else if (pos.retries < card.maxRetries) {
    const prompt = card.retryPrompt ?? card.prompt
    if (prompt) await say(rt, event, prompt, where)
    return { ...pos, retries: pos.retries + 1 }
  } else varsOf(rt, event)[card.variable] = undefined
  return runFlow(rt, event, pos.flowId, pos.nodeId, pos.cardIndex + 1)
}

/** The first trigger (flows and their triggers in declaration order) matching this event. */
export function findTrigger(event: Json, conversationStarted: boolean): { flowId: string; eventName: string } | null {
  // A webhook event fires `{ type: 'event', name: 'webhook' }` triggers; it never matches message triggers.
  const custom = event.type === 'custom' || event.type === 'webhook' || isHandoffEvent(event)
  const payload = isObj(event.payload) ? event.payload : {}
  const text = custom ? '' : previewText(event).trim()
  const lower = text.toLowerCase()
  for (const [flowId, flow] of bot.flows) {
    for (const t of flow.triggers) {
      if (t.kind === 'conversationStarted') {
        if (conversationStarted) return { flowId, eventName: 'conversationStarted' }
      } else if (conversationStarted) {
        // The conversation's start is its own event: only conversationStarted triggers answer it.
      } else if (t.kind === 'event') {
        if (custom && (payload.name === t.name || payload.type === t.name || event.type === t.name)) return { flowId, eventName: t.name }
      } else if (!custom) {
        let hit = t.text === undefined || lower === t.text
        if (hit && t.regex) {
          t.regex.lastIndex = 0
          hit = t.regex.test(text)
        }
        if (hit) return { flowId, eventName: 'message' }
      }
    }
  }
  return null
}
