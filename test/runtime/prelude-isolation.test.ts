/**
 * The prelude's bindings are out of bot code's reach (issue #27, item 4: the prelude as bundled modules). The bot's
 * module runs after the prelude in the same realm; at its top level it
 * - reads every name the prelude's modules export (their captured built-ins, host functions, entry points...):
 *   none is a global, none resolves from its code;
 * - then wraps every built-in the prelude captured (JSON, Promise, Object.keys, Function, the AsyncFunction
 *   constructor, Date.now…) and defines a global function under each of those names, each recording its callers.
 * Hooks, actions, the outgoing path, state and a workflow with execute, transition, templates and action cards then
 * run as usual, and nothing was recorded: the prelude called its own captured bindings, never a global. (previewOf,
 * the helper the worker passes in from src/runtime/preview.ts, is not the prelude's: it reads JSON.stringify and
 * Array.isArray when called, and its calls are not counted.)
 */
import { readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, jsonAfter, STREAM_CONFIG, Talk } from './helpers.js'

const PRELUDE_DIR = new URL('../../src/runtime/prelude/', import.meta.url)

/** Every name the prelude's modules export (the bundle's top-level bindings), but the entry's `default`. */
async function preludeNames(): Promise<string[]> {
  const names = new Set<string>()
  for (const file of readdirSync(PRELUDE_DIR).filter((f) => f.endsWith('.ts'))) {
    for (const name of Object.keys(await import(new URL(file, PRELUDE_DIR).href))) if (name !== 'default') names.add(name)
  }
  return [...names].sort()
}

/** The built-ins the prelude captures (src/runtime/prelude/intrinsics.ts), as bot code can replace them. */
const BUILT_INS = `
const ProxyOriginal = Proxy
const ErrorOriginal = Error
const define = Object.defineProperty
// previewOf (src/runtime/preview.ts, which the worker hands the prelude as a helper) reads JSON and Array when it
// runs: its calls are not the prelude's, and are not counted.
const record = (label) => { if (!/\\bpreviewOf\\b/.test(new ErrorOriginal().stack)) calls.push(label) }
const wrap = (owner, key, label) => {
  const original = owner[key]
  const wrapped = new ProxyOriginal(original, {
    apply(target, self, args) { record(label); return Reflect.apply(target, self, args) },
    construct(target, args, newTarget) { record(label); return Reflect.construct(target, args, newTarget === wrapped ? target : newTarget) },
  })
  define(owner, key, { value: wrapped, writable: true, configurable: true })
}
wrap(Date, 'now', 'Date.now')
wrap(Math, 'random', 'Math.random')
wrap(Math, 'floor', 'Math.floor')
wrap(Math, 'min', 'Math.min')
wrap(Math, 'max', 'Math.max')
wrap(JSON, 'stringify', 'JSON.stringify')
wrap(JSON, 'parse', 'JSON.parse')
wrap(Promise, 'race', 'Promise.race')
wrap(Object, 'keys', 'Object.keys')
wrap(Object, 'freeze', 'Object.freeze')
wrap(Object, 'defineProperty', 'Object.defineProperty')
wrap(Object.prototype, 'hasOwnProperty', 'Object.prototype.hasOwnProperty')
wrap(Array, 'isArray', 'Array.isArray')
wrap(globalThis, 'Promise', 'Promise')
wrap(globalThis, 'Proxy', 'Proxy')
wrap(globalThis, 'Function', 'Function')
wrap(Object.getPrototypeOf(async function () {}), 'constructor', 'AsyncFunction')
`

function botCode(names: string[]): string {
  return String.raw`
const stringify = JSON.stringify
const calls = []
// What the prelude's names resolve to from here, and which of them are globals, before anything is replaced.
const resolved = { ${names.map((n) => `${n}: typeof ${n}`).join(', ')} }
const globals = Object.getOwnPropertyNames(globalThis).filter((name) => name in resolved)
const names = Object.keys(resolved)
${BUILT_INS}
for (const name of names) globalThis[name] = function () { calls.push('global ' + name) }

export const actions = {
  double(ctx, input) { return { n: input.n * 2 } },
}
export const hooks = {
  beforeOutgoing({ event }) { event.payload = { type: 'text', text: event.payload.text + '.' } },
  async afterIncoming({ event, client, actions, state }) {
    const text = event.payload.text
    if (text === 'hi') {
      state.conversation.count = (state.conversation.count || 0) + 1
      const doubled = await actions.double({ n: 21 })
      await client.createMessage({ payload: { type: 'text', text: 'hello ' + state.conversation.count + ' ' + doubled.n } })
    } else if (text === 'report') {
      await client.createMessage({ payload: { type: 'text', text: 'REPORT ' + stringify({ calls, resolved, globals }) } })
    }
  },
}
export const workflows = {
  answer: {
    trigger: { type: 'message', text: 'flow' },
    nodes: {
      start: {
        cards: [
          { type: 'execute', code: 'vars.n = 6 * 7' },
          { type: 'transition', conditions: [{ when: 'vars.n === 42', to: 'found' }], else: 'lost' },
        ],
      },
      found: {
        cards: [
          { type: 'say', text: 'answer {{ vars.n }}' },
          { type: 'action', action: 'double', input: { n: '{{ vars.n }}' }, output: 'd' },
          { type: 'say', text: 'doubled {{ vars.d.n }}' },
        ],
      },
      lost: { cards: [{ type: 'say', text: 'lost' }] },
    },
  },
}
`
}

describe('runtime: bot code cannot reach or replace the prelude\'s bindings', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
  })

  afterAll(async () => {
    await h?.close()
  })

  it('captured built-ins, host functions and entry points: no global names them, replacing the globals changes nothing', async () => {
    const names = await preludeNames()
    // The modules' own names (a sample; the list is read from the modules).
    expect(names).toEqual(expect.arrayContaining(['jsonStringify', 'promiseRace', 'FunctionCtor', 'bindHost', 'hostCall', 'hostBudget', 'unit', 'abortUnit', 'turn', 'beforeIncoming', 'action', 'load', 'bot', 'setBot', 'sendMessage', 'runHook']))
    const bot = await createBot(h, botCode(names))
    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('hi')).toEqual(['hello 1 42.'])
      expect(await talk.askText('flow', 2)).toEqual(['answer 42.', 'doubled 84.'])
      expect(await talk.askText('hi')).toEqual(['hello 2 42.'])
      const [report] = await talk.askText('report')
      const { calls, resolved, globals } = jsonAfter<{ calls: string[]; resolved: Record<string, string>; globals: string[] }>(report!.replace(/\.$/, ''), 'REPORT ')
      expect(globals).toEqual([])
      expect(Object.entries(resolved).filter(([, type]) => type !== 'undefined')).toEqual([])
      expect(Object.keys(resolved).sort()).toEqual(names)
      expect(calls).toEqual([])
    } finally {
      await talk.close()
    }
  })
})
