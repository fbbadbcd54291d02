/* load()'s checks of the bot module's parts: JSON data, payloads, triggers and the cards of workflows. */
import { isArray, objectKeys } from './intrinsics.js'
import { checkTemplates, compileCode, compileExpr } from './templates.js'
import type { AgentCard, AgentTool, Card, CaptureCard, Json, KnowledgeCard, Trigger, UserFn } from './types.js'
import { describe, errText, hasOwn, isObj, pathKey, quote, setOwn } from './util.js'

const CARD_TYPES = ['say', 'execute', 'action', 'capture', 'transition', 'end', 'knowledge', 'handoff', 'agent']
/** What a tool's name may be (the strictest of the providers' rules: OpenAI's); src/domain/agent/agent-steps.ts TOOL_NAME. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/
const MAX_STEPS = 10
const TRIGGER_TYPES = ['conversationStarted', 'message', 'event']
const VALIDATE_TYPES = ['text', 'number', 'email', 'pattern']
const PAYLOAD_TYPES = ['text', 'markdown', 'image', 'audio', 'video', 'file', 'location', 'card', 'carousel', 'choice', 'dropdown', 'bloc']
const DEFAULT_MAX_RETRIES = 2

export function checkKeys(o: Json, allowed: string[], where: string): void {
  for (const k of objectKeys(o)) {
    if (allowed.indexOf(k) < 0) throw new Error(where + ': unknown property ' + quote(k) + ' (allowed: ' + allowed.join(', ') + ')')
  }
}

/** A detached copy of plain JSON data (strings, finite numbers, booleans, null, arrays, plain objects). */
export function data(v: unknown, where: string, depth: number): unknown {
  if (depth > 64) throw new Error(where + ': nested too deeply (a cycle?)')
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
  if (typeof v === 'number') {
    if (v !== v || v === Infinity || v === -Infinity) throw new Error(where + ' must be a finite number')
    return v
  }
  if (isArray(v)) return v.map((x, i) => data(x, where + '[' + i + ']', depth + 1))
  if (isObj(v)) {
    const out: Json = {}
    for (const k of objectKeys(v)) if (v[k] !== undefined) setOwn(out, k, data(v[k], pathKey(where, k), depth + 1))
    return out
  }
  throw new Error(where + ' must be JSON data, got ' + describe(v))
}

export function checkPayload(p: unknown, where: string): Json {
  if (!isObj(p)) throw new Error(where + ' must be a message payload object, got ' + describe(p))
  if (typeof p.type !== 'string' || PAYLOAD_TYPES.indexOf(p.type) < 0) {
    throw new Error(where + '.type must be one of ' + PAYLOAD_TYPES.join(', ') + ', got ' + (typeof p.type === 'string' ? quote(p.type) : describe(p.type)))
  }
  const copy = data(p, where, 0) as Json
  checkTemplates(copy, where)
  return copy
}

export function checkPrompt(p: unknown, where: string): Json | undefined {
  if (p === undefined) return undefined
  if (typeof p === 'string') {
    if (p.trim() === '') throw new Error(where + ' must not be empty')
    checkTemplates(p, where)
    return { type: 'text', text: p }
  }
  if (!isObj(p)) throw new Error(where + ' must be a string or a message payload object, got ' + describe(p))
  return checkPayload(p, where)
}

export function nonEmptyString(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw new Error(where + ' must be a non-empty string, got ' + describe(v))
  return v
}

export function nodeRef(v: unknown, where: string, nodes: Json): string {
  const id = nonEmptyString(v, where)
  if (!hasOwn(nodes, id)) throw new Error(where + ': no node ' + quote(id) + ' in this workflow (nodes: ' + objectKeys(nodes).join(', ') + ')')
  return id
}

export function compileRegex(source: unknown, flags: unknown, where: string): RegExp {
  const src = nonEmptyString(source, where + '.pattern')
  if (flags !== undefined && typeof flags !== 'string') throw new Error(where + '.flags must be a string, got ' + describe(flags))
  try {
    return new RegExp(src, flags)
  } catch (err) {
    throw new Error(where + '.pattern: invalid regular expression: ' + errText(err))
  }
}

export function checkTrigger(t: unknown, where: string): Trigger {
  if (!isObj(t)) throw new Error(where + ' must be a trigger object, got ' + describe(t))
  const type = t.type
  if (typeof type !== 'string' || TRIGGER_TYPES.indexOf(type) < 0) {
    throw new Error(where + '.type must be one of ' + TRIGGER_TYPES.join(', ') + ', got ' + (typeof type === 'string' ? quote(type) : describe(type)))
  }
  if (type === 'conversationStarted') {
    checkKeys(t, ['type'], where)
    return { kind: 'conversationStarted' }
  }
  if (type === 'event') {
    checkKeys(t, ['type', 'name'], where)
    return { kind: 'event', name: nonEmptyString(t.name, where + '.name') }
  }
  checkKeys(t, ['type', 'text', 'pattern', 'flags'], where)
  const trigger: { kind: 'message'; text?: string; regex?: RegExp } = { kind: 'message' }
  if (t.text !== undefined) trigger.text = nonEmptyString(t.text, where + '.text').trim().toLowerCase()
  if (t.pattern !== undefined) trigger.regex = compileRegex(t.pattern, t.flags, where)
  else if (t.flags !== undefined) throw new Error(where + '.flags is only allowed with a pattern')
  return trigger
}

export function checkCard(c: unknown, where: string, nodes: Json, actions: Map<string, UserFn>): Card {
  if (!isObj(c)) throw new Error(where + ' must be a card object, got ' + describe(c))
  const type = c.type
  if (typeof type !== 'string' || CARD_TYPES.indexOf(type) < 0) {
    throw new Error(where + '.type must be one of ' + CARD_TYPES.join(', ') + ', got ' + (typeof type === 'string' ? quote(type) : describe(type)))
  }
  const at = where + ' (' + type + ')'
  switch (type) {
    case 'say': {
      checkKeys(c, ['type', 'payload', 'text'], at)
      if ((c.payload === undefined) === (c.text === undefined)) throw new Error(at + ': needs exactly one of `payload` or `text`')
      if (c.text !== undefined) {
        const text = nonEmptyString(c.text, where + '.text')
        checkTemplates(text, where + '.text')
        return { type: 'say', payload: { type: 'text', text } }
      }
      return { type: 'say', payload: checkPayload(c.payload, where + '.payload') }
    }
    case 'execute': {
      checkKeys(c, ['type', 'code'], at)
      const code = nonEmptyString(c.code, where + '.code')
      try {
        compileCode(code)
      } catch (err) {
        throw new Error(where + '.code: ' + errText(err))
      }
      return { type: 'execute', code }
    }
    case 'action': {
      checkKeys(c, ['type', 'action', 'input', 'output'], at)
      const name = nonEmptyString(c.action, where + '.action')
      if (!actions.has(name)) {
        const known = [...actions.keys()]
        throw new Error(where + '.action: unknown action ' + quote(name) + (known.length ? ' (actions: ' + known.join(', ') + ')' : ' (the bot exports no actions)'))
      }
      const input = c.input === undefined ? undefined : data(c.input, where + '.input', 0)
      checkTemplates(input, where + '.input')
      const card: Card = { type: 'action', action: name, input }
      if (c.output !== undefined) card.output = nonEmptyString(c.output, where + '.output')
      return card
    }
    case 'capture': {
      checkKeys(c, ['type', 'variable', 'prompt', 'validate', 'retryPrompt', 'maxRetries'], at)
      const card: CaptureCard = {
        type: 'capture',
        variable: nonEmptyString(c.variable, where + '.variable'),
        validate: 'text',
        maxRetries: DEFAULT_MAX_RETRIES,
      }
      const prompt = checkPrompt(c.prompt, where + '.prompt')
      if (prompt) card.prompt = prompt
      const retryPrompt = checkPrompt(c.retryPrompt, where + '.retryPrompt')
      if (retryPrompt) card.retryPrompt = retryPrompt
      if (c.validate !== undefined) {
        const v = c.validate
        const vw = where + '.validate'
        if (!isObj(v)) throw new Error(vw + " must be an object like { type: 'number' }, got " + describe(v))
        checkKeys(v, ['type', 'pattern', 'flags'], vw)
        if (typeof v.type !== 'string' || VALIDATE_TYPES.indexOf(v.type) < 0) {
          throw new Error(vw + '.type must be one of ' + VALIDATE_TYPES.join(', ') + ', got ' + (typeof v.type === 'string' ? quote(v.type) : describe(v.type)))
        }
        card.validate = v.type as CaptureCard['validate']
        if (v.type === 'pattern') card.regex = compileRegex(v.pattern, v.flags, vw)
        else if (v.pattern !== undefined || v.flags !== undefined) throw new Error(vw + ": pattern and flags are only allowed with type 'pattern'")
      }
      if (c.maxRetries !== undefined) {
        const m = c.maxRetries
        if (typeof m !== 'number' || !Number.isInteger(m) || m < 0) throw new Error(where + '.maxRetries must be an integer ≥ 0, got ' + (typeof m === 'number' ? String(m) : describe(m)))
        card.maxRetries = m
      }
      return card
    }
    case 'transition': {
      checkKeys(c, ['type', 'conditions', 'else'], at)
      const conditions: Array<{ when: string; to: string }> = []
      if (c.conditions !== undefined) {
        if (!isArray(c.conditions)) throw new Error(where + '.conditions must be an array, got ' + describe(c.conditions))
        c.conditions.forEach((cond: unknown, i: number) => {
          const cw = where + '.conditions[' + i + ']'
          if (!isObj(cond)) throw new Error(cw + " must be an object like { when: 'vars.age >= 18', to: 'adult' }, got " + describe(cond))
          checkKeys(cond, ['when', 'to'], cw)
          const when = nonEmptyString(cond.when, cw + '.when')
          try {
            compileExpr(when)
          } catch (err) {
            throw new Error(cw + '.when: invalid expression: ' + errText(err))
          }
          conditions.push({ when, to: nodeRef(cond.to, cw + '.to', nodes) })
        })
      }
      const card: Card = { type: 'transition', conditions }
      if (c.else !== undefined) card.else = nodeRef(c.else, where + '.else', nodes)
      if (conditions.length === 0 && card.else === undefined) throw new Error(at + ': needs at least one condition or an `else`')
      return card
    }
    case 'knowledge': {
      checkKeys(c, ['type', 'knowledgeBases', 'question', 'limit', 'output', 'noAnswer', 'minScore'], at)
      const card: KnowledgeCard = { type: 'knowledge', question: '{{ event.preview }}', limit: 3, noAnswer: 'Sorry, I could not find an answer to that.' }
      if (c.knowledgeBases !== undefined) {
        if (!isArray(c.knowledgeBases) || c.knowledgeBases.length === 0) throw new Error(where + '.knowledgeBases must be a non-empty array of knowledge base names or ids')
        card.knowledgeBases = (c.knowledgeBases as unknown[]).map((k, i) => nonEmptyString(k, where + '.knowledgeBases[' + i + ']'))
      }
      if (c.question !== undefined) card.question = nonEmptyString(c.question, where + '.question')
      checkTemplates(card.question, where + '.question')
      if (c.limit !== undefined) {
        if (typeof c.limit !== 'number' || !Number.isInteger(c.limit) || c.limit < 1 || c.limit > 10) throw new Error(where + '.limit must be an integer from 1 to 10')
        card.limit = c.limit
      }
      if (c.output !== undefined) card.output = nonEmptyString(c.output, where + '.output')
      if (c.noAnswer !== undefined) card.noAnswer = nonEmptyString(c.noAnswer, where + '.noAnswer')
      if (c.minScore !== undefined) {
        if (typeof c.minScore !== 'number' || !(c.minScore >= 0 && c.minScore <= 1)) throw new Error(where + '.minScore must be a number from 0 to 1')
        card.minScore = c.minScore
      }
      return card
    }
    case 'agent':
      return checkAgentCard(c, where, at, actions)
    case 'handoff': {
      checkKeys(c, ['type', 'reason'], at)
      const card: { type: 'handoff'; reason?: string } = { type: 'handoff' }
      if (c.reason !== undefined) {
        card.reason = nonEmptyString(c.reason, where + '.reason')
        checkTemplates(card.reason, where + '.reason')
      }
      return card
    }
    default: {
      checkKeys(c, ['type'], at)
      return { type: 'end' }
    }
  }
}

/** What an action declared as `{ handler, description?, input? }`, or an agent card's tool, tells the model of it. */
export function checkToolInfo(o: Json, where: string): { description?: string; input?: Json } {
  const out: { description?: string; input?: Json } = {}
  if (o.description !== undefined) out.description = nonEmptyString(o.description, where + '.description')
  if (o.input !== undefined) {
    if (!isObj(o.input)) throw new Error(where + ".input must be a JSON schema object, e.g. { type: 'object', properties: { orderId: { type: 'string' } } }")
    out.input = data(o.input, where + '.input', 0) as Json
  }
  return out
}

function checkAgentCard(c: Json, where: string, at: string, actions: Map<string, UserFn>): AgentCard {
  checkKeys(c, ['type', 'instructions', 'knowledge', 'tools', 'handoff', 'model', 'maxSteps', 'fallback'], at)
  const card: AgentCard = {
    type: 'agent', instructions: nonEmptyString(c.instructions, where + '.instructions'), tools: [], handoff: false, maxSteps: 5,
    fallback: 'Sorry, I cannot answer that right now.',
  }
  if (c.knowledge === true) card.knowledge = true
  else if (c.knowledge !== undefined && c.knowledge !== false) {
    if (!isArray(c.knowledge) || c.knowledge.length === 0) throw new Error(where + '.knowledge must be true (all knowledge bases) or a non-empty array of knowledge base names or ids')
    card.knowledge = (c.knowledge as unknown[]).map((k, i) => nonEmptyString(k, where + '.knowledge[' + i + ']'))
  }
  if (c.tools !== undefined) {
    if (!isArray(c.tools)) throw new Error(where + ".tools must be an array of action names or { action, description?, input? }")
    card.tools = (c.tools as unknown[]).map((t, i): AgentTool => {
      const tw = where + '.tools[' + i + ']'
      const tool = (typeof t === 'string' ? { action: t } : t) as Json
      if (!isObj(tool)) throw new Error(tw + ' must be an action name or { action, description?, input? }, got ' + describe(t))
      checkKeys(tool, ['action', 'description', 'input'], tw)
      const name = nonEmptyString(tool.action, tw + '.action')
      if (!actions.has(name)) throw new Error(tw + ': unknown action ' + quote(name) + (actions.size ? ' (actions: ' + [...actions.keys()].join(', ') + ')' : ' (the bot exports no actions)'))
      if (!TOOL_NAME.test(name)) throw new Error(tw + ': the action name ' + quote(name) + ' cannot be a tool name (letters, digits, _ and -, at most 64)')
      return { action: name, ...checkToolInfo(tool, tw) }
    })
  }
  if (c.handoff !== undefined) {
    if (typeof c.handoff !== 'boolean') throw new Error(where + '.handoff must be true or false')
    card.handoff = c.handoff
  }
  if (c.model !== undefined) {
    const ok = typeof c.model === 'string' ? c.model !== '' : isArray(c.model) && c.model.length > 0 && (c.model as unknown[]).every((m) => typeof m === 'string' && m !== '')
    if (!ok) throw new Error(where + ".model must be a model id or preset ('best', 'fast'), or a non-empty array of them (a fallback list)")
    card.model = c.model as string | string[]
  }
  if (c.maxSteps !== undefined) {
    if (typeof c.maxSteps !== 'number' || !Number.isInteger(c.maxSteps) || c.maxSteps < 1 || c.maxSteps > MAX_STEPS) throw new Error(where + '.maxSteps must be an integer from 1 to ' + MAX_STEPS)
    card.maxSteps = c.maxSteps
  }
  if (c.fallback !== undefined) card.fallback = nonEmptyString(c.fallback, where + '.fallback')
  return card
}
