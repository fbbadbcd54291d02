/* The entry points the worker calls with JSON text: beforeIncoming, turn and action (prelude-contract.ts). */
import { safePreview } from './host.js'
import { isArray, jsonParse, jsonStringify } from './intrinsics.js'
import { isStop, makeCtx, runHook } from './hooks.js'
import { findTrigger, resumeCapture, runFlow, waitingCapture } from './flows.js'
import { fail, newRun, unit } from './run.js'
import { bot, stateOf } from './state.js'
import type { Json, Waiting } from './types.js'
import { describe, errText, isHandoffEvent, isObj, isPayload, jsonClone, quote } from './util.js'

const STATE_KEYS = ['user', 'conversation', 'bot']

export function prepareEvent(ev: unknown): Json {
  if (!isObj(ev)) throw new Error('prelude: input.event must be an object')
  const state = isObj(ev.state) ? ev.state : {}
  for (const k of STATE_KEYS) if (!isObj(state[k])) state[k] = {}
  ev.state = state
  if (typeof ev.preview !== 'string') ev.preview = safePreview(ev.payload)
  return ev
}

export function parseInput(json: string, what: string): Json {
  const input: unknown = jsonParse(json)
  if (!isObj(input)) throw new Error('prelude: ' + what + ' input must be a JSON object')
  return input
}

export async function beforeIncoming(inputJson: string): Promise<string> {
  const input = parseInput(inputJson, 'beforeIncoming')
  const rt = newRun(input.budgetMs)
  const event = prepareEvent(input.event)
  const original: unknown = jsonClone(event.payload)
  const result = { payload: original, stop: false }
  if (!bot.hooks.has('beforeIncoming')) return jsonStringify(result)
  const hook = await runHook(rt, 'beforeIncoming', event, false)
  if (!hook.ok) return jsonStringify(result)
  const p: unknown = event.payload
  if (isObj(p) && (event.type === 'custom' || isPayload(p))) {
    try {
      result.payload = await unit(rt, () => jsonClone(p))
    } catch (err) {
      fail(rt, 'hooks.beforeIncoming', new Error('event.payload is not JSON (' + errText(err) + '); the original payload was kept'))
    }
  } else {
    fail(rt, 'hooks.beforeIncoming', new Error('event.payload must stay ' + (event.type === 'custom' ? 'an object' : 'a message payload object with a string `type`') + '; the original payload was kept'))
  }
  result.stop = isStop(hook.result)
  // What the hook threw (already logged), for the host's counts of failures; only when there is any.
  return rt.errors.length > 0 ? jsonStringify({ payload: result.payload, stop: result.stop, errors: rt.errors }) : jsonStringify(result)
}

export async function turn(inputJson: string): Promise<string> {
  const input = parseInput(inputJson, 'turn')
  const rt = newRun(input.budgetMs)
  const event = prepareEvent(input.event)
  const originalState: Json = jsonClone(event.state)

  let flow: Waiting | null = null
  let handled = false
  const waiting = waitingCapture(input.flow)
  if (waiting) {
    flow = waiting.pos
    if (event.type !== 'custom' && !isHandoffEvent(event)) {
      handled = true
      rt.handled = true
      flow = await resumeCapture(rt, event, waiting.pos, waiting.card)
    }
  }
  if (!handled && bot.flows.size > 0) {
    let match: { flowId: string; eventName: string } | null = null
    try {
      match = await unit(rt, () => findTrigger(event, input.conversationStarted === true))
    } catch (err) {
      fail(rt, 'workflows (triggers)', err)
    }
    const started = match ? bot.flows.get(match.flowId) : undefined
    if (match && started) {
      event.trigger = {
        flowId: match.flowId,
        nodeId: started.start,
        eventName: match.eventName,
        conversationId: event.conversationId,
        userId: event.userId,
        integration: event.integration,
      }
      stateOf(rt, event).workflow = {}
      rt.handled = true
      flow = await runFlow(rt, event, match.flowId, started.start, 0)
    }
  }
  // The conversation's start is not an incoming message or event: the incoming hooks do not see it.
  if (input.conversationStarted !== true) {
    await runHook(rt, 'afterIncoming', event, false)
    await runHook(rt, 'afterTurnEnd', event, false)
  }

  // The state as user code left it; what cannot be saved is reported and replaced by the turn's starting value.
  let state: Json = originalState
  if (isObj(event.state)) {
    state = event.state
    for (const k of STATE_KEYS) {
      if (!isObj(state[k])) {
        fail(rt, 'event.state.' + k, new Error('must be an object; its changes in this turn were discarded'))
        state[k] = originalState[k]
      }
    }
  } else fail(rt, 'event.state', new Error('must be an object; the changes of this turn were discarded'))
  let stateJson: string
  try {
    stateJson = await unit(rt, () => jsonStringify(state))
    if (typeof stateJson !== 'string') throw new Error('it serializes to nothing')
  } catch (err) {
    fail(rt, 'event.state', new Error('is not JSON-serializable (' + errText(err) + '); the changes of this turn were discarded'))
    stateJson = jsonStringify(originalState)
  }
  return '{"state":' + stateJson + ',"flow":' + jsonStringify(flow) + ',"errors":' + jsonStringify(rt.errors) + '}'
}

/**
 * callAction (POST /v1/chat/actions): runs the exported action `type` with `input` under the run's
 * budget, with the ctx a hook gets (the event is a bot-level `action` event). Output: { output } or
 * { error } (unknown action, a throw, an output that is not a JSON object), plus the run's errors.
 */
export async function action(inputJson: string): Promise<string> {
  const input = parseInput(inputJson, 'action')
  const rt = newRun(input.budgetMs)
  const event = prepareEvent(input.event)
  const type = String(input.type)
  const fn = bot.actions.get(type)
  if (fn === undefined) {
    const known = [...bot.actions.keys()]
    return jsonStringify({ unknown: true, error: 'unknown action ' + quote(type) + (known.length ? ' (actions: ' + known.join(', ') + ')' : ' (the bot exports no actions)'), errors: rt.errors })
  }
  try {
    const ctx = makeCtx(rt, event)
    const result: unknown = await unit(rt, () => fn(ctx, jsonClone(input.input)))
    const out: unknown = result === undefined ? {} : await unit(rt, () => jsonClone(result))
    if (!isObj(out) || isArray(out)) return jsonStringify({ error: 'the action must return a JSON object, got ' + describe(out), errors: rt.errors })
    return '{"output":' + jsonStringify(out) + ',"errors":' + jsonStringify(rt.errors) + '}'
  } catch (err) {
    fail(rt, 'actions.' + type, err)
    return jsonStringify({ error: errText(err), errors: rt.errors })
  }
}
