import type { PreludeApi, PreludeHelpers, PreludeHost } from './prelude-contract.js'

/*
 * The in-sandbox runtime ("prelude"). `parleyPrelude` is stringified and evaluated INSIDE the bot's QuickJS
 * sandbox, so it is self-contained: the only import is type-only (erased), every helper and constant lives inside
 * the function body, and it uses nothing but its parameters and standard built-ins. The types below are erased too.
 *
 * Bot-author documentation: docs/bot-code.md. Host contract: ./prelude-contract.ts.
 */

type Json = Record<string, any>
type UserFn = (...args: any[]) => any

/** Per-call bookkeeping: one `turn` or `beforeIncoming` call (several may interleave in one sandbox). */
interface Run {
  budgetMs: number
  /** Absolute end (ms) of the top-level unit of user code being run, 0 between units. */
  deadline: number
  errors: string[]
  visits: number
  /** A workflow took this event (a capture it answered, or a trigger it fired): hooks see `ctx.handledByWorkflow`. */
  handled: boolean
}

type Trigger = { kind: 'conversationStarted' } | { kind: 'message'; text?: string; regex?: RegExp } | { kind: 'event'; name: string }

interface CaptureCard {
  type: 'capture'
  variable: string
  prompt?: Json
  retryPrompt?: Json
  validate: 'text' | 'number' | 'email' | 'pattern'
  regex?: RegExp
  maxRetries: number
}

type Card =
  | { type: 'say'; payload: Json }
  | { type: 'execute'; code: string }
  | { type: 'action'; action: string; input: unknown; output?: string }
  | CaptureCard
  | { type: 'transition'; conditions: Array<{ when: string; to: string }>; else?: string }
  | { type: 'end' }
  | KnowledgeCard
  | { type: 'handoff'; reason?: string }

/** Answers from knowledge bases (host call searchKnowledge): best passage and its sources, or noAnswer. */
interface KnowledgeCard {
  type: 'knowledge'
  knowledgeBases?: string[]
  question: string
  limit: number
  output?: string
  noAnswer: string
  /** Relevance threshold of this card's search (default: the server's PARLEY_KB_MIN_SCORE). */
  minScore?: number
}

interface FlowNode {
  cards: Card[]
  next?: string
}

interface Flow {
  triggers: Trigger[]
  start: string
  nodes: Map<string, FlowNode>
}

interface Bot {
  hooks: Map<string, UserFn>
  actions: Map<string, UserFn>
  flows: Map<string, Flow>
}

/** The persisted workflow position (TurnOutput.flow): only ever a capture waiting for the next message. */
interface Waiting {
  flowId: string
  nodeId: string
  cardIndex: number
  waiting: 'capture'
  retries: number
}

type Step = { kind: 'next' } | { kind: 'goto'; node: string } | { kind: 'end' } | { kind: 'wait' }

type Scope = { event: Json; state: Json; vars: Json }

export function parleyPrelude(host: PreludeHost, helpers: PreludeHelpers): PreludeApi {
  // ---------------------------------------------------------------------------------------------------------------
  // Constants and built-ins captured before any bot code runs (bot code shares this realm and could replace them).
  // ---------------------------------------------------------------------------------------------------------------
  const HOOK_NAMES = ['beforeIncoming', 'afterIncoming', 'beforeOutgoing', 'afterOutgoing', 'afterTurnEnd']
  const CARD_TYPES = ['say', 'execute', 'action', 'capture', 'transition', 'end', 'knowledge', 'handoff']
  const TRIGGER_TYPES = ['conversationStarted', 'message', 'event']
  const VALIDATE_TYPES = ['text', 'number', 'email', 'pattern']
  const PAYLOAD_TYPES = ['text', 'markdown', 'image', 'audio', 'video', 'file', 'location', 'card', 'carousel', 'choice', 'dropdown', 'bloc']
  const STATE_KEYS = ['user', 'conversation', 'bot']
  const MAX_NODE_VISITS = 100
  const MAX_OUTGOING_DEPTH = 3
  const DEFAULT_MAX_RETRIES = 2
  const DEFAULT_BUDGET_MS = 5000

  const now: () => number = Date.now
  const random: () => number = Math.random
  const floor = Math.floor
  const mathMin = Math.min
  const mathMax = Math.max
  const jsonStringify = JSON.stringify
  const HostPromise = Promise
  const promiseRace = Promise.race.bind(Promise)
  const jsonParse = JSON.parse
  const objectKeys = Object.keys
  const freeze = Object.freeze
  const ProxyCtor = Proxy
  const defineProperty = Object.defineProperty
  const isArray = Array.isArray
  const hasOwnProperty = Object.prototype.hasOwnProperty
  const previewOf = helpers.previewOf
  const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor as new (...args: string[]) => UserFn
  const FunctionCtor = Function as unknown as new (...args: string[]) => UserFn

  let bot: Bot = { hooks: new Map(), actions: new Map(), flows: new Map() }
  const compiled = new Map<string, UserFn>()
  const templates = new Map<string, Array<string | { expr: string }> | null>()
  /** Nesting depth of outgoing events (sends made from outgoing hooks), to stop send → hook → send loops. */
  const outgoingDepth = new WeakMap<object, number>()

  // ---------------------------------------------------------------------------------------------------------------
  // Small helpers
  // ---------------------------------------------------------------------------------------------------------------
  function isObj(v: unknown): v is Json {
    return typeof v === 'object' && v !== null && !isArray(v)
  }

  function hasOwn(o: object, k: string): boolean {
    return hasOwnProperty.call(o, k)
  }

  function setOwn(o: Json, k: string, v: unknown): void {
    defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  }

  function describe(v: unknown): string {
    if (v === null) return 'null'
    if (v === undefined) return 'undefined'
    if (isArray(v)) return 'an array'
    const t = typeof v
    return (t === 'object' ? 'an ' : 'a ') + t
  }

  function quote(s: string): string {
    return jsonStringify(s.length > 60 ? s.slice(0, 59) + '…' : s)
  }

  function pathKey(base: string, key: string): string {
    return /^[A-Za-z_$][\w$]*$/.test(key) ? base + '.' + key : base + '[' + jsonStringify(key) + ']'
  }

  function errText(err: unknown): string {
    try {
      const e = err as { message?: unknown } | null | undefined
      return String((e && e.message) || err)
    } catch {
      return 'unknown error'
    }
  }

  /** Where in the deployed module the error was raised: the first `bot.js:LINE:COLUMN` of its stack (the host maps it to the bot's own file). */
  function deployedPosition(err: unknown): string | undefined {
    try {
      const stack = (err as { stack?: unknown } | null | undefined)?.stack
      if (typeof stack !== 'string') return undefined
      const m = /\bbot\.js:\d+:\d+/.exec(stack)
      return m ? m[0] : undefined
    } catch {
      return undefined
    }
  }

  function log(level: 'debug' | 'info' | 'warn' | 'error', text: string): void {
    try {
      host.log(level, text)
    } catch {
      // logging must never break a turn
    }
  }

  function fail(rt: Run, where: string, err: unknown): void {
    let message = errText(err)
    // Stopped at the time limit (QuickJS's interrupt, or abortUnit): say which limit, and the setting behind it.
    if (message === 'interrupted' || message === 'InternalError: interrupted' || message.indexOf('timed out (its wall-time budget ran out)') === 0) {
      message = 'timed out: it ran longer than its ' + rt.budgetMs + ' ms budget (each hook, card or action; set by PARLEY_BOT_TIMEOUT_MS, or the bot\'s maxExecutionTime in seconds)'
    }
    const at = deployedPosition(err)
    const text = where + ': ' + message + (at ? ' (at ' + at + ')' : '')
    rt.errors.push(text)
    log('error', text)
  }

  function newRun(budgetMs: unknown): Run {
    const ms = typeof budgetMs === 'number' && budgetMs > 0 && budgetMs < Infinity ? budgetMs : DEFAULT_BUDGET_MS
    return { budgetMs: ms, deadline: 0, errors: [], visits: 0, handled: false }
  }

  /** A UUIDv7-shaped id (time-ordered; Math.random is the only randomness in the sandbox). */
  function newId(): string {
    const hex = '0123456789abcdef'
    let ms = now()
    let s = ''
    for (let i = 0; i < 12; i++) {
      s = hex.charAt(ms % 16) + s
      ms = floor(ms / 16)
    }
    s += '7'
    for (let i = 0; i < 19; i++) s += i === 3 ? hex.charAt(8 + floor(random() * 4)) : hex.charAt(floor(random() * 16))
    return s.slice(0, 8) + '-' + s.slice(8, 12) + '-' + s.slice(12, 16) + '-' + s.slice(16, 20) + '-' + s.slice(20)
  }

  function safePreview(payload: unknown): string {
    try {
      return previewOf(payload)
    } catch {
      return ''
    }
  }

  /** A detached JSON copy (throws on cycles, BigInt...). */
  function jsonClone<T>(v: T): T {
    const text = jsonStringify(v)
    return (text === undefined ? undefined : jsonParse(text)) as T
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Budgets: host.budget before every piece of user code
  // ---------------------------------------------------------------------------------------------------------------
  /** Fails the top-level unit running now (see abortUnit). */
  let abortCurrent: ((err: Error) => void) | undefined

  /**
   * Runs one top-level unit of user code (a hook, a card, an action card...) with a fresh budget. The host
   * ends a unit that overruns it through abortUnit: the unit then fails with a timeout, whatever its code
   * is doing (waiting forever, or interrupted in a job its own awaits never resume).
   */
  async function unit<T>(rt: Run, fn: () => T | Promise<T>): Promise<T> {
    rt.deadline = now() + rt.budgetMs
    host.budget(rt.budgetMs)
    let abort: ((err: Error) => void) | undefined
    const aborted = new HostPromise<never>((_resolve, reject) => {
      abort = reject
    })
    abortCurrent = abort
    try {
      return await promiseRace([fn(), aborted])
    } finally {
      rt.deadline = 0
      if (abortCurrent === abort) abortCurrent = undefined
    }
  }

  function abortUnit(): boolean {
    const abort = abortCurrent
    if (abort === undefined) return false
    abortCurrent = undefined
    abort(new Error('timed out (its wall-time budget ran out)'))
    return true
  }

  /**
   * Budget of user code started BY user code (an action called through ctx.actions, the outgoing hooks of a
   * client.createMessage): it shares the deadline of the unit that called it, so calling actions in a loop cannot
   * extend a unit's time. Outside any unit (a promise left running by finished code) it gets a fresh budget.
   */
  function nestedBudget(rt: Run): void {
    if (rt.deadline === 0) host.budget(rt.budgetMs)
    else host.budget(mathMax(1, mathMin(rt.budgetMs, rt.deadline - now())))
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Compilation of expressions, templates and code (user code, compiled in the global scope: no access to the prelude)
  // ---------------------------------------------------------------------------------------------------------------
  function compileExpr(src: string): UserFn {
    const key = 'e\u0000' + src
    let fn = compiled.get(key)
    if (fn === undefined) {
      fn = new FunctionCtor('event', 'state', 'vars', '"use strict";\nreturn (' + src + '\n);')
      compiled.set(key, fn)
    }
    return fn
  }

  function compileCode(src: string): UserFn {
    const key = 'c\u0000' + src
    let fn = compiled.get(key)
    if (fn === undefined) {
      fn = new AsyncFunction('event', 'state', 'vars', 'client', 'actions', '"use strict";\n' + src + '\n')
      compiled.set(key, fn)
    }
    return fn
  }

  /** Splits a template into literal parts and `{{ expr }}` parts; null when it holds no `{{`. */
  function templateParts(s: string): Array<string | { expr: string }> | null {
    if (templates.has(s)) return templates.get(s) ?? null
    let parts: Array<string | { expr: string }> | null = null
    if (s.indexOf('{{') >= 0) {
      parts = []
      let i = 0
      for (;;) {
        const open = s.indexOf('{{', i)
        if (open < 0) {
          if (i < s.length) parts.push(s.slice(i))
          break
        }
        const close = s.indexOf('}}', open + 2)
        if (close < 0) throw new Error('unclosed "{{" in template ' + quote(s))
        const expr = s.slice(open + 2, close).trim()
        if (expr === '') throw new Error('empty "{{ }}" in template ' + quote(s))
        if (open > i) parts.push(s.slice(i, open))
        parts.push({ expr })
        i = close + 2
      }
    }
    templates.set(s, parts)
    return parts
  }

  /** Load-time check of every template string inside a value (syntax errors surface at deploy). */
  function checkTemplates(v: unknown, where: string): void {
    if (typeof v === 'string') {
      let parts: Array<string | { expr: string }> | null
      try {
        parts = templateParts(v)
        if (parts) for (const p of parts) if (typeof p !== 'string') compileExpr(p.expr)
      } catch (err) {
        throw new Error(where + ': invalid template: ' + errText(err))
      }
    } else if (isArray(v)) v.forEach((x, i) => checkTemplates(x, where + '[' + i + ']'))
    else if (isObj(v)) for (const k of objectKeys(v)) checkTemplates(v[k], pathKey(where, k))
  }

  function toText(v: unknown): string {
    if (typeof v === 'string') return v
    if (v === undefined || v === null) return ''
    if (typeof v === 'object') {
      try {
        const s = jsonStringify(v)
        if (s !== undefined) return s
      } catch {
        // fall through
      }
    }
    return String(v)
  }

  /** Renders a template string; `raw` keeps the value's own type when the string is a single `{{ expr }}`. */
  function renderString(s: string, sc: Scope, raw: boolean): unknown {
    const parts = templateParts(s)
    if (parts === null) return s
    const values = parts.map((p) => (typeof p === 'string' ? p : compileExpr(p.expr)(sc.event, sc.state, sc.vars)))
    if (raw) {
      const exprs = parts.filter((p) => typeof p !== 'string').length
      const literal = parts.every((p) => typeof p !== 'string' || p.trim() === '')
      if (exprs === 1 && literal) return values[parts.findIndex((p) => typeof p !== 'string')]
    }
    return values.map(toText).join('')
  }

  function render(v: unknown, sc: Scope, raw: boolean): unknown {
    if (typeof v === 'string') return renderString(v, sc, raw)
    if (isArray(v)) return v.map((x) => render(x, sc, raw))
    if (isObj(v)) {
      const out: Json = {}
      for (const k of objectKeys(v)) setOwn(out, k, render(v[k], sc, raw))
      return out
    }
    return v
  }

  // ---------------------------------------------------------------------------------------------------------------
  // load(): validation of the bot module
  // ---------------------------------------------------------------------------------------------------------------
  function checkKeys(o: Json, allowed: string[], where: string): void {
    for (const k of objectKeys(o)) {
      if (allowed.indexOf(k) < 0) throw new Error(where + ': unknown property ' + quote(k) + ' (allowed: ' + allowed.join(', ') + ')')
    }
  }

  /** A detached copy of plain JSON data (strings, finite numbers, booleans, null, arrays, plain objects). */
  function data(v: unknown, where: string, depth: number): unknown {
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

  function checkPayload(p: unknown, where: string): Json {
    if (!isObj(p)) throw new Error(where + ' must be a message payload object, got ' + describe(p))
    if (typeof p.type !== 'string' || PAYLOAD_TYPES.indexOf(p.type) < 0) {
      throw new Error(where + '.type must be one of ' + PAYLOAD_TYPES.join(', ') + ', got ' + (typeof p.type === 'string' ? quote(p.type) : describe(p.type)))
    }
    const copy = data(p, where, 0) as Json
    checkTemplates(copy, where)
    return copy
  }

  function checkPrompt(p: unknown, where: string): Json | undefined {
    if (p === undefined) return undefined
    if (typeof p === 'string') {
      if (p.trim() === '') throw new Error(where + ' must not be empty')
      checkTemplates(p, where)
      return { type: 'text', text: p }
    }
    if (!isObj(p)) throw new Error(where + ' must be a string or a message payload object, got ' + describe(p))
    return checkPayload(p, where)
  }

  function nonEmptyString(v: unknown, where: string): string {
    if (typeof v !== 'string' || v.trim() === '') throw new Error(where + ' must be a non-empty string, got ' + describe(v))
    return v
  }

  function nodeRef(v: unknown, where: string, nodes: Json): string {
    const id = nonEmptyString(v, where)
    if (!hasOwn(nodes, id)) throw new Error(where + ': no node ' + quote(id) + ' in this workflow (nodes: ' + objectKeys(nodes).join(', ') + ')')
    return id
  }

  function compileRegex(source: unknown, flags: unknown, where: string): RegExp {
    const src = nonEmptyString(source, where + '.pattern')
    if (flags !== undefined && typeof flags !== 'string') throw new Error(where + '.flags must be a string, got ' + describe(flags))
    try {
      return new RegExp(src, flags)
    } catch (err) {
      throw new Error(where + '.pattern: invalid regular expression: ' + errText(err))
    }
  }

  function checkTrigger(t: unknown, where: string): Trigger {
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

  function checkCard(c: unknown, where: string, nodes: Json, actions: Map<string, UserFn>): Card {
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

  function checkFlow(f: unknown, where: string, actions: Map<string, UserFn>): Flow {
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

  function load(exportsValue: unknown): string {
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
    const rawActions = pick('actions')
    if (rawActions !== undefined) {
      if (!isObj(rawActions)) throw new Error('actions must be an object of functions, got ' + describe(rawActions))
      for (const k of objectKeys(rawActions)) {
        const fn = rawActions[k]
        if (typeof fn !== 'function') throw new Error(pathKey('actions', k) + ' must be a function (ctx, input) => output, got ' + describe(fn))
        actions.set(k, fn)
      }
    }

    const flows = new Map<string, Flow>()
    const rawFlows = pick('workflows')
    if (rawFlows !== undefined) {
      if (!isObj(rawFlows)) throw new Error('workflows must be an object of workflow definitions, got ' + describe(rawFlows))
      for (const id of objectKeys(rawFlows)) flows.set(id, checkFlow(rawFlows[id], pathKey('workflows', id), actions))
    }

    bot = { hooks, actions, flows }
    return jsonStringify({ hooks: [...hooks.keys()], actions: [...actions.keys()], workflows: [...flows.keys()] })
  }

  // ---------------------------------------------------------------------------------------------------------------
  // ctx, client, actions
  // ---------------------------------------------------------------------------------------------------------------
  function stateOf(rt: Run, event: Json): Json {
    if (!isObj(event.state)) {
      fail(rt, 'event.state', new Error('must stay an object; it was reset to empty user, conversation and bot objects'))
      event.state = { user: {}, conversation: {}, bot: {} }
    }
    return event.state
  }

  function varsOf(rt: Run, event: Json): Json {
    const state = stateOf(rt, event)
    if (!isObj(state.workflow)) state.workflow = {}
    return state.workflow
  }

  function scopeOf(rt: Run, event: Json): Scope {
    const vars = varsOf(rt, event)
    return { event, state: event.state, vars }
  }

  function makeActions(rt: Run, event: Json): Json {
    const out: Json = {}
    for (const [name, fn] of bot.actions) {
      setOwn(out, name, async (input?: unknown) => {
        const ctx = makeCtx(rt, event)
        nestedBudget(rt)
        return await fn(ctx, input)
      })
    }
    return freeze(out)
  }

  /** The client's Runtime API methods that are passed to the host as they are (docs/bot-code.md, "The client"). */
  const RUNTIME_METHODS = [
    'createUser', 'getOrCreateUser', 'updateUser', 'listUsers',
    'createConversation', 'getOrCreateConversation', 'updateConversation', 'listConversations',
    'listParticipants', 'addParticipant', 'getParticipant', 'removeParticipant',
    'updateMessage', 'deleteMessage', 'listTagValues',
    // an installed integration's action: { type: 'alias:action', input } → { output, meta }
    'callAction',
    // tables (src/runtime/sandbox-tables.ts TABLE_METHODS)
    'listTables', 'getTable', 'getOrCreateTable', 'createTable', 'duplicateTable', 'exportTable', 'importTable', 'getTableJobs',
    'updateTable', 'renameTableColumn', 'deleteTable', 'getTableRow', 'findTableRows', 'createTableRows', 'updateTableRows',
    'upsertTableRows', 'deleteTableRows',
  ]

  function runtimeMethods(call: (method: string, args: Json) => Promise<unknown>, argsOf: (method: string, a: unknown) => Json): Json {
    const out: Json = {}
    for (const name of RUNTIME_METHODS) out[name] = async (a?: unknown) => call(name, argsOf(name, a))
    return out
  }

  function makeClient(rt: Run, event: Json): Json {
    const call = async (method: string, args: Json): Promise<unknown> => jsonParse(await host.call(method, jsonStringify(args)))
    const argsOf = (method: string, a: unknown): Json => {
      if (a === undefined) return {}
      if (!isObj(a)) throw new Error('client.' + method + ' expects an object argument, got ' + describe(a))
      return a
    }
    const conversationOf = (method: string, a: Json): string => {
      const id = a.conversationId === undefined ? event.conversationId : a.conversationId
      if (typeof id !== 'string' || id === '') throw new Error('client.' + method + ': conversationId must be a non-empty string')
      return id
    }
    const idOf = (method: string, a: Json): string => {
      if (typeof a.id !== 'string' || a.id === '') throw new Error('client.' + method + ': id must be a non-empty string')
      return a.id
    }
    const client = freeze({
      createMessage: async (a?: unknown) => sendMessage(rt, event, argsOf('createMessage', a), false),
      createEvent: async (a?: unknown) => {
        const args = argsOf('createEvent', a)
        if (!isObj(args.payload)) throw new Error('client.createEvent: payload must be an object, got ' + describe(args.payload))
        return call('createEvent', { conversationId: conversationOf('createEvent', args), payload: args.payload })
      },
      // The webchat's typing indicator (a turn shows one on its own; this starts one for `timeout` ms, at most 60 s).
      startTypingIndicator: async (a?: unknown) => {
        const args = argsOf('startTypingIndicator', a)
        if (args.timeout !== undefined && (typeof args.timeout !== 'number' || !(args.timeout > 0))) throw new Error('client.startTypingIndicator: timeout must be a positive number of milliseconds, got ' + describe(args.timeout))
        const out: Json = { conversationId: conversationOf('startTypingIndicator', args) }
        if (args.timeout !== undefined) out.timeout = args.timeout
        return call('startTypingIndicator', out)
      },
      stopTypingIndicator: async (a?: unknown) => call('stopTypingIndicator', { conversationId: conversationOf('stopTypingIndicator', argsOf('stopTypingIndicator', a)) }),
      getMessage: async (a?: unknown) => call('getMessage', { id: idOf('getMessage', argsOf('getMessage', a)) }),
      listMessages: async (a?: unknown) => {
        const args = argsOf('listMessages', a)
        const out: Json = { conversationId: conversationOf('listMessages', args) }
        if (args.nextToken !== undefined) out.nextToken = args.nextToken
        if (args.pageSize !== undefined) out.pageSize = args.pageSize
        return call('listMessages', out)
      },
      getConversation: async (a?: unknown) => call('getConversation', { id: idOf('getConversation', argsOf('getConversation', a)) }),
      getUser: async (a?: unknown) => call('getUser', { id: idOf('getUser', argsOf('getUser', a)) }),
      searchKnowledge: async (a?: unknown) => searchKnowledge(event, argsOf('searchKnowledge', a)),
      // Human handoff (README "Human handoff"): the conversation waits for a workspace member until endHandoff.
      startHandoff: async (a?: unknown) => {
        const args = argsOf('startHandoff', a)
        if (args.reason !== undefined && typeof args.reason !== 'string') throw new Error('client.startHandoff: reason must be a string, got ' + describe(args.reason))
        const out: Json = { conversationId: conversationOf('startHandoff', args) }
        if (args.reason !== undefined) out.reason = args.reason
        if (typeof event.userId === 'string') out.userId = event.userId
        return call('startHandoff', out)
      },
      endHandoff: async (a?: unknown) => call('endHandoff', { conversationId: conversationOf('endHandoff', argsOf('endHandoff', a)) }),
      // Webhook events only: a chunk of the raw body (README "Webhook integration").
      readWebhookBody: async (a?: unknown) => call('readWebhookBody', argsOf('readWebhookBody', a)),
      // Runtime API operations (@botpress/client names and shapes), served by the host's domain service.
      ...runtimeMethods(call, argsOf),
    })
    // A method the client does not have fails with its name and the ones it has (not "not a function").
    return new ProxyCtor(client, {
      get(target: Json, prop: string | symbol): unknown {
        if (typeof prop !== 'string' || hasOwnProperty.call(target, prop) || prop === 'then' || prop === 'toJSON' || prop in target) return target[prop as string]
        return async () => {
          throw new Error('client.' + prop + ' is not a method of the bot client (it has: ' + objectKeys(target).sort().join(', ') + ')')
        }
      },
    }) as Json
  }

  /**
   * client.searchKnowledge and knowledge cards: the host searches; the answer is merged into `event.kb`
   * (`included`: knowledge bases queried, `results`: passages), so hooks running later see it.
   */
  async function searchKnowledge(event: Json, a: Json): Promise<Json> {
    if (typeof a.query !== 'string') throw new Error('client.searchKnowledge: query must be a string, got ' + describe(a.query))
    const args: Json = { query: a.query }
    if (a.knowledgeBases !== undefined) args.knowledgeBases = a.knowledgeBases
    if (a.limit !== undefined) args.limit = a.limit
    if (a.minScore !== undefined) args.minScore = a.minScore
    const answer = jsonParse(await host.call('searchKnowledge', jsonStringify(args))) as Json
    const kb: Json = isObj(event.kb) ? event.kb : { included: [], results: [] }
    if (!isArray(kb.included)) kb.included = []
    if (!isArray(kb.results)) kb.results = []
    for (const k of answer.included as Json[]) if (!(kb.included as Json[]).some((x) => isObj(x) && x.id === k.id)) (kb.included as Json[]).push(k)
    for (const r of answer.results as Json[]) (kb.results as Json[]).push(r)
    event.kb = kb
    return answer
  }

  async function runKnowledgeCard(rt: Run, event: Json, card: KnowledgeCard, where: string): Promise<void> {
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
    if (results.length > 0) {
      const sources: string[] = []
      for (const r of results) {
        const source = String(r.fileKey) + (typeof r.pageNumber === 'number' ? ' (page ' + r.pageNumber + ')' : '')
        if (sources.indexOf(source) < 0) sources.push(source)
      }
      let body = String(results[0]!.content)
      try {
        // Composed by the configured OpenAI-compatible endpoint, if any (the host answers null otherwise).
        const composed = jsonParse(await host.call('composeKnowledgeAnswer', jsonStringify({ question: query, results }))) as Json
        if (typeof composed.text === 'string' && composed.text !== '') body = composed.text
      } catch (err) {
        fail(rt, where, err)
      }
      text = body + '\n\nSources: ' + sources.join(', ')
    }
    try {
      await sendMessage(rt, event, { payload: { type: 'text', text } }, true)
    } catch (err) {
      fail(rt, where, err)
    }
  }

  function makeCtx(rt: Run, event: Json): Json {
    return { event, client: makeClient(rt, event), actions: makeActions(rt, event), state: stateOf(rt, event), handledByWorkflow: rt.handled }
  }

  function isStop(result: unknown): boolean {
    try {
      return isObj(result) && result.stop === true
    } catch {
      return false
    }
  }

  /** Runs a hook if the bot defines it; errors are recorded, never thrown. */
  async function runHook(rt: Run, name: string, event: Json, nested: boolean): Promise<{ ok: boolean; result?: unknown }> {
    const fn = bot.hooks.get(name)
    if (fn === undefined) return { ok: true }
    try {
      const ctx = makeCtx(rt, event)
      let result: unknown
      if (nested) {
        nestedBudget(rt)
        result = await fn(ctx)
      } else result = await unit(rt, () => fn(ctx))
      return { ok: true, result }
    } catch (err) {
      fail(rt, 'hooks.' + name, err)
      return { ok: false }
    }
  }

  /** handoff_started / handoff_ended: events (they match `{ type: 'event', name }` triggers, never message triggers or a waiting capture). */
  function isHandoffEvent(event: Json): boolean {
    return event.type === 'handoff_started' || event.type === 'handoff_ended'
  }

  function isPayload(p: unknown): p is Json {
    return isObj(p) && typeof p.type === 'string' && p.type !== ''
  }

  /**
   * client.createMessage (and say cards): beforeOutgoing → host createMessage → afterOutgoing.
   * `topLevel` is true for sends made by the runtime (cards), false for sends made by user code.
   */
  async function sendMessage(rt: Run, base: Json, args: Json, topLevel: boolean): Promise<unknown> {
    let payload: unknown = args.payload
    if (typeof args.type === 'string' && isObj(payload) && typeof payload.type !== 'string') payload = { type: args.type, ...payload }
    if (!isPayload(payload)) throw new Error('client.createMessage: payload must be an object with a string `type`, e.g. { type: "text", text: "hi" }')
    payload = jsonClone(payload)
    const conversationId = args.conversationId === undefined ? base.conversationId : args.conversationId
    if (typeof conversationId !== 'string' || conversationId === '') throw new Error('client.createMessage: conversationId must be a non-empty string')
    const depth = (outgoingDepth.get(base) ?? 0) + 1
    if (depth > MAX_OUTGOING_DEPTH) throw new Error('client.createMessage: messages sent from outgoing hooks are nested more than ' + MAX_OUTGOING_DEPTH + ' deep')

    const tags = isObj(base.tags) ? base.tags : {}
    const out: Json = {
      botId: base.botId,
      conversationId,
      createdOn: new Date().toISOString(),
      direction: 'outgoing',
      id: newId(),
      integration: base.integration,
      messageId: undefined,
      payload,
      preview: safePreview(payload),
      state: base.state,
      tags: { conversation: isObj(tags.conversation) ? tags.conversation : {}, message: {}, user: isObj(tags.user) ? tags.user : {} },
      type: (payload as Json).type,
      userId: undefined,
    }
    if (base.trigger !== undefined) out.trigger = base.trigger
    outgoingDepth.set(out, depth)

    let final = payload as Json
    if (bot.hooks.has('beforeOutgoing')) {
      const original = jsonClone(final)
      const before = await runHook(rt, 'beforeOutgoing', out, !topLevel)
      if (before.ok && isStop(before.result)) return { message: null }
      if (!before.ok) final = original
      else if (isPayload(out.payload)) {
        try {
          final = jsonClone(out.payload)
        } catch (err) {
          fail(rt, 'hooks.beforeOutgoing', new Error('event.payload is not JSON (' + errText(err) + '); the original payload was sent'))
          final = original
        }
      } else {
        fail(rt, 'hooks.beforeOutgoing', new Error('event.payload must be a message payload object with a string `type`; the original payload was sent'))
        final = original
      }
      out.payload = final
      out.type = final.type
      out.preview = safePreview(final)
    }

    const callArgs: Json = { conversationId, payload: final }
    if (args.metadata !== undefined) callArgs.metadata = args.metadata
    if (args.tags !== undefined) callArgs.tags = args.tags
    const result: unknown = jsonParse(await host.call('createMessage', jsonStringify(callArgs)))
    const message = isObj(result) ? result.message : undefined
    if (isObj(message)) {
      if (typeof message.id === 'string') out.messageId = message.id
      if (typeof message.userId === 'string') out.userId = message.userId
      if (typeof message.createdAt === 'string') out.createdOn = message.createdAt
    }
    await runHook(rt, 'afterOutgoing', out, !topLevel)
    return result
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Workflows
  // ---------------------------------------------------------------------------------------------------------------
  function cardWhere(flowId: string, nodeId: string, index: number, type: string): string {
    return pathKey(pathKey('workflows', flowId) + '.nodes', nodeId) + '.cards[' + index + '] (' + type + ')'
  }

  function previewText(event: Json): string {
    return typeof event.preview === 'string' ? event.preview : safePreview(event.payload)
  }

  /** Sends a card's payload (templates rendered in their own unit); failures are recorded. */
  async function say(rt: Run, event: Json, payload: Json, where: string): Promise<void> {
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

  async function runCard(rt: Run, event: Json, card: Card, where: string): Promise<Step> {
    switch (card.type) {
      case 'knowledge':
        await runKnowledgeCard(rt, event, card, where)
        return { kind: 'next' }
      case 'say':
        await say(rt, event, card.payload, where)
        return { kind: 'next' }
      case 'handoff': {
        // Hands the conversation to a person and ends the flow: the user's next messages go to the agent.
        try {
          const args: Json = { conversationId: event.conversationId }
          if (typeof event.userId === 'string') args.userId = event.userId
          if (card.reason !== undefined) args.reason = await unit(rt, () => render(card.reason, scopeOf(rt, event), false))
          await host.call('startHandoff', jsonStringify(args))
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

  /** Runs a flow from a position until it ends (null) or waits on a capture (the position to persist). */
  async function runFlow(rt: Run, event: Json, flowId: string, nodeId: string, cardIndex: number): Promise<Waiting | null> {
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
  function waitingCapture(flow: unknown): { pos: Waiting; card: CaptureCard } | null {
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

  function checkCapture(card: CaptureCard, text: string): { ok: boolean; value?: unknown } {
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

  async function resumeCapture(rt: Run, event: Json, pos: Waiting, card: CaptureCard): Promise<Waiting | null> {
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
  function findTrigger(event: Json, conversationStarted: boolean): { flowId: string; eventName: string } | null {
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

  // ---------------------------------------------------------------------------------------------------------------
  // Entry points
  // ---------------------------------------------------------------------------------------------------------------
  function prepareEvent(ev: unknown): Json {
    if (!isObj(ev)) throw new Error('prelude: input.event must be an object')
    const state = isObj(ev.state) ? ev.state : {}
    for (const k of STATE_KEYS) if (!isObj(state[k])) state[k] = {}
    ev.state = state
    if (typeof ev.preview !== 'string') ev.preview = safePreview(ev.payload)
    return ev
  }

  function parseInput(json: string, what: string): Json {
    const input: unknown = jsonParse(json)
    if (!isObj(input)) throw new Error('prelude: ' + what + ' input must be a JSON object')
    return input
  }

  async function beforeIncoming(inputJson: string): Promise<string> {
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

  async function turn(inputJson: string): Promise<string> {
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
  async function action(inputJson: string): Promise<string> {
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

  return freeze({ load, beforeIncoming, turn, action, abortUnit })
}
