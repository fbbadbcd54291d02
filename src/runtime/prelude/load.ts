/* load(): validates the bot module's exports (hooks, actions, workflows) and keeps them as the VM's bot. */
import { isArray, jsonStringify, objectKeys } from './intrinsics.js'
import { setBot } from './state.js'
import type { Flow, FlowNode, Json, UserFn } from './types.js'
import { describe, isObj, pathKey, quote } from './util.js'
import { checkCard, checkKeys, checkToolInfo, checkTrigger, data, nodeRef } from './validate.js'

const HOOK_NAMES = ['beforeIncoming', 'afterIncoming', 'beforeOutgoing', 'afterOutgoing', 'afterTurnEnd']

export function checkFlow(f: unknown, where: string, actions: Map<string, UserFn>): Flow {
  if (!isObj(f)) throw new Error(where + ' must be a workflow object { trigger, start?, nodes }, got ' + describe(f))
  checkKeys(f, ['trigger', 'start', 'nodes'], where)
  if (f.trigger === undefined) throw new Error(where + ".trigger is required (e.g. { type: 'conversationStarted' })")
  const rawTriggers: unknown[] = isArray(f.trigger) ? f.trigger : [f.trigger]
  if (rawTriggers.length === 0) throw new Error(where + '.trigger must not be an empty array')
  const triggers = rawTriggers.map((t, i) => checkTrigger(t, isArray(f.trigger) ? where + '.trigger[' + i + ']' : where + '.trigger'))
  const rawNodes = f.nodes
  if (!isObj(rawNodes) || objectKeys(rawNodes).length === 0) throw new Error(where + '.nodes must be a non-empty object of nodes, got ' + describe(rawNodes))
  const ids = objectKeys(rawNodes)
  const start = f.start === undefined ? (ids[0] as string) : nodeRef(f.start, where + '.start', rawNodes)
  const nodes = new Map<string, FlowNode>()
  for (const id of ids) {
    const nw = pathKey(where + '.nodes', id)
    const n = rawNodes[id]
    if (!isObj(n)) throw new Error(nw + ' must be a node object { cards, next? }, got ' + describe(n))
    checkKeys(n, ['cards', 'next'], nw)
    if (n.cards !== undefined && !isArray(n.cards)) throw new Error(nw + '.cards must be an array of cards, got ' + describe(n.cards))
    const cards = ((n.cards ?? []) as unknown[]).map((c, i) => checkCard(c, nw + '.cards[' + i + ']', rawNodes, actions))
    const node: FlowNode = { cards }
    if (n.next !== undefined) node.next = nodeRef(n.next, nw + '.next', rawNodes)
    nodes.set(id, node)
  }
  return { triggers, start, nodes }
}

export function load(exportsValue: unknown): string {
  if (typeof exportsValue !== 'object' || exportsValue === null) throw new Error('bot module: expected the module namespace object, got ' + describe(exportsValue))
  const ns = exportsValue as Json
  const def = ns.default
  const pick = (name: string): unknown => (ns[name] !== undefined ? ns[name] : isObj(def) ? def[name] : undefined)

  const hooks = new Map<string, UserFn>()
  const rawHooks = pick('hooks')
  if (rawHooks !== undefined) {
    if (!isObj(rawHooks)) throw new Error('hooks must be an object of functions, got ' + describe(rawHooks))
    for (const k of objectKeys(rawHooks)) {
      if (HOOK_NAMES.indexOf(k) < 0) throw new Error('hooks: unknown hook ' + quote(k) + ' (allowed: ' + HOOK_NAMES.join(', ') + ')')
      const fn = rawHooks[k]
      if (fn === undefined) continue
      if (typeof fn !== 'function') throw new Error('hooks.' + k + ' must be a function, got ' + describe(fn))
      hooks.set(k, fn)
    }
  }

  const actions = new Map<string, UserFn>()
  const actionInfo = new Map<string, { description?: string; input?: Json }>()
  const rawActions = pick('actions')
  if (rawActions !== undefined) {
    if (!isObj(rawActions)) throw new Error('actions must be an object of functions, got ' + describe(rawActions))
    for (const k of objectKeys(rawActions)) {
      const at = pathKey('actions', k)
      const fn = rawActions[k]
      // A function, or a declaration { handler, description?, input? } (what an agent card tells the model of it).
      if (isObj(fn) && typeof fn.handler === 'function') {
        checkKeys(fn, ['handler', 'description', 'input'], at)
        actions.set(k, fn.handler)
        actionInfo.set(k, checkToolInfo(fn, at))
        continue
      }
      if (typeof fn !== 'function') throw new Error(at + ' must be a function (ctx, input) => output or { handler, description?, input? }, got ' + describe(fn))
      actions.set(k, fn)
    }
  }
  const guardrails = pick('guardrails')
  if (guardrails !== undefined) {
    if (!isObj(guardrails)) throw new Error('guardrails must be an object { instructions?, refuse?, maxAnswerChars? }, got ' + describe(guardrails))
    checkKeys(guardrails, ['instructions', 'refuse', 'maxAnswerChars'], 'guardrails')
    if (guardrails.instructions !== undefined && typeof guardrails.instructions !== 'string') throw new Error('guardrails.instructions must be a string')
    if (guardrails.refuse !== undefined && (!isArray(guardrails.refuse) || (guardrails.refuse as unknown[]).some((t) => typeof t !== 'string'))) throw new Error('guardrails.refuse must be an array of topics (strings)')
    const max = guardrails.maxAnswerChars
    if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 20)) throw new Error('guardrails.maxAnswerChars must be an integer ≥ 20')
  }

  const flows = new Map<string, Flow>()
  const rawFlows = pick('workflows')
  if (rawFlows !== undefined) {
    if (!isObj(rawFlows)) throw new Error('workflows must be an object of workflow definitions, got ' + describe(rawFlows))
    for (const id of objectKeys(rawFlows)) flows.set(id, checkFlow(rawFlows[id], pathKey('workflows', id), actions))
  }

  setBot({ hooks, actions, actionInfo, flows, ...(guardrails !== undefined && { guardrails: data(guardrails, 'guardrails', 0) as Json }) })
  return jsonStringify({ hooks: [...hooks.keys()], actions: [...actions.keys()], workflows: [...flows.keys()] })
}
