import vm from 'node:vm'
import { PASSED_THROUGH_METHODS } from '../../src/http/operations/index.js'
import { describe, expect, it } from 'vitest'
import { parleyPrelude } from '../../src/runtime/prelude.js'
import { previewOf } from '../../src/runtime/preview.js'
import type { FlowState, PreludeApi, PreludeHelpers, PreludeHost, TurnOutput } from '../../src/runtime/prelude-contract.js'

/* The prelude is plain JavaScript at runtime: these tests run it directly in Node against a fake host. */

type Json = Record<string, any>
type State = TurnOutput['state']

interface Recorded {
  method: string
  args: Json
}

type Handler = (args: Json) => unknown

/**
 * A fake host: records calls, budgets and logs; createMessage echoes `{ message: { id, ...args } }`. It keeps a deadline
 * as the sandbox worker does: its run's start plus the run's budget (startRun), then what each budget call sets.
 */
function fakeHost(handlers: Record<string, Handler> = {}) {
  const calls: Recorded[] = []
  const budgets: number[] = []
  let deadline = 0
  const logs: Array<{ level: string; text: string }> = []
  let seq = 0
  const host: PreludeHost = {
    async call(method, argsJson) {
      const args = JSON.parse(argsJson) as Json
      calls.push({ method, args })
      const handler = handlers[method]
      if (handler) return JSON.stringify(await handler(args))
      if (method === 'createMessage') {
        seq++
        return JSON.stringify({ message: { id: `msg-${seq}`, userId: 'bot-user', createdAt: '2024-05-01T00:00:00.000Z', ...args } })
      }
      return JSON.stringify({ echo: { method, args } })
    },
    budget(ms) {
      budgets.push(ms)
      deadline = Date.now() + ms
    },
    log(level, text) {
      logs.push({ level, text })
    },
  }
  return {
    host, calls, budgets, logs, sent: () => calls.filter((c) => c.method === 'createMessage').map((c) => c.args.payload as Json),
    startRun: (budgetMs: number) => void (deadline = Date.now() + budgetMs),
    /** The time the host would give the code running now before it stops it, in ms. */
    remaining: () => deadline - Date.now(),
    deadline: () => deadline,
  }
}

const emptyState = (): State => ({ user: {}, conversation: {}, bot: {} })
let eventSeq = 0

function messageEvent(payload: Json | string, state: State = emptyState()): Json {
  const p = typeof payload === 'string' ? { type: 'text', text: payload } : payload
  eventSeq++
  return {
    botId: 'bot-1',
    conversationId: 'conv-1',
    createdOn: '2024-05-01T00:00:00.000Z',
    direction: 'incoming',
    id: `evt-${eventSeq}`,
    integration: 'chat',
    messageId: `in-${eventSeq}`,
    payload: p,
    preview: previewOf(p),
    state,
    tags: { conversation: { lang: 'en' }, message: { m: '1' }, user: { vip: 'yes' } },
    type: p.type,
    userId: 'user-1',
  }
}

function customEvent(payload: Json, state: State = emptyState()): Json {
  eventSeq++
  return {
    botId: 'bot-1',
    conversationId: 'conv-1',
    createdOn: '2024-05-01T00:00:00.000Z',
    direction: 'incoming',
    id: `evt-${eventSeq}`,
    integration: 'chat',
    payload,
    preview: previewOf(payload),
    state,
    tags: { conversation: {}, message: {}, user: {} },
    type: 'custom',
    userId: 'user-1',
  }
}

interface TurnOptions {
  flow?: FlowState
  conversationStarted?: boolean
  budgetMs?: number
}

function setup(mod: unknown, handlers: Record<string, Handler> = {}, make: typeof parleyPrelude = parleyPrelude, helpers: PreludeHelpers = { previewOf, methods: PASSED_THROUGH_METHODS }) {
  const fake = fakeHost(handlers)
  const api: PreludeApi = make(fake.host, helpers)
  const summary = JSON.parse(api.load(mod)) as { hooks: string[]; actions: string[]; workflows: string[] }
  const turn = async (event: Json, options: TurnOptions = {}): Promise<TurnOutput> => {
    fake.startRun(options.budgetMs ?? 1000)
    return JSON.parse(
      await api.turn(
        JSON.stringify({ event, flow: options.flow ?? null, conversationStarted: options.conversationStarted ?? false, budgetMs: options.budgetMs ?? 1000 }),
      ),
    ) as TurnOutput
  }
  const beforeIncoming = async (event: Json): Promise<{ payload: Json; stop: boolean }> => {
    fake.startRun(1000)
    return JSON.parse(await api.beforeIncoming(JSON.stringify({ event, budgetMs: 1000 }))) as { payload: Json; stop: boolean }
  }
  return { ...fake, api, summary, turn, beforeIncoming }
}

/** A module with one workflow started by any message. */
const flowModule = (nodes: Json, extra: Json = {}) => ({ workflows: { main: { trigger: { type: 'message' }, nodes } }, ...extra })

// -------------------------------------------------------------------------------------------------------------------
describe('load', () => {
  it('accepts named exports and reports a summary', () => {
    const { summary } = setup({
      hooks: { afterIncoming: () => {}, beforeOutgoing: () => {} },
      actions: { add: () => 1, mul: () => 2 },
      workflows: { greet: { trigger: { type: 'conversationStarted' }, nodes: { a: { cards: [{ type: 'end' }] } } } },
    })
    expect(summary).toEqual({ hooks: ['afterIncoming', 'beforeOutgoing'], actions: ['add', 'mul'], workflows: ['greet'] })
  })

  it('accepts the same as properties of the default export; named exports win', () => {
    expect(setup({ default: { hooks: { afterTurnEnd: () => {} }, actions: { a: () => {} } } }).summary).toEqual({ hooks: ['afterTurnEnd'], actions: ['a'], workflows: [] })
    expect(setup({ actions: { named: () => {} }, default: { actions: { fromDefault: () => {} } } }).summary.actions).toEqual(['named'])
    expect(setup({}).summary).toEqual({ hooks: [], actions: [], workflows: [] })
  })

  const node = (cards: unknown[], extra: Json = {}) => ({ cards, ...extra })
  const wf = (flow: Json) => ({ workflows: { f: { trigger: { type: 'message' }, nodes: { a: node([]) }, ...flow } } })
  const cards = (...list: unknown[]) => wf({ nodes: { a: node(list), b: node([]) } })
  const cases: Array<[string, unknown, string | RegExp]> = [
    ['null exports', null, 'bot module: expected the module namespace object, got null'],
    ['hooks not an object', { hooks: [] }, 'hooks must be an object of functions, got an array'],
    ['unknown hook', { hooks: { beforeIncomming: () => {} } }, 'hooks: unknown hook "beforeIncomming" (allowed: beforeIncoming, afterIncoming, beforeOutgoing, afterOutgoing, afterTurnEnd)'],
    ['hook not a function', { hooks: { afterIncoming: 'x' } }, 'hooks.afterIncoming must be a function, got a string'],
    ['actions not an object', { actions: 3 }, 'actions must be an object of functions, got a number'],
    ['action not a function', { actions: { 'do-it': {} } }, 'actions["do-it"] must be a function (ctx, input) => output or { handler, description?, input? }, got an object'],
    ['workflows not an object', { workflows: 'x' }, 'workflows must be an object of workflow definitions, got a string'],
    ['flow not an object', { workflows: { f: 1 } }, 'workflows.f must be a workflow object { trigger, start?, nodes }, got a number'],
    ['unknown flow property', wf({ trigers: [] }), 'workflows.f: unknown property "trigers" (allowed: trigger, start, nodes)'],
    ['missing trigger', wf({ trigger: undefined }), "workflows.f.trigger is required (e.g. { type: 'conversationStarted' })"],
    ['empty trigger list', wf({ trigger: [] }), 'workflows.f.trigger must not be an empty array'],
    ['bad trigger type', wf({ trigger: { type: 'timer' } }), 'workflows.f.trigger.type must be one of conversationStarted, message, event, got "timer"'],
    ['event trigger without name', wf({ trigger: [{ type: 'message' }, { type: 'event' }] }), 'workflows.f.trigger[1].name must be a non-empty string, got undefined'],
    ['invalid pattern', wf({ trigger: { type: 'message', pattern: '(' } }), /^workflows\.f\.trigger\.pattern: invalid regular expression: /],
    ['flags without pattern', wf({ trigger: { type: 'message', flags: 'i' } }), 'workflows.f.trigger.flags is only allowed with a pattern'],
    ['unknown trigger property', wf({ trigger: { type: 'conversationStarted', text: 'x' } }), 'workflows.f.trigger: unknown property "text" (allowed: type)'],
    ['empty nodes', wf({ nodes: {} }), 'workflows.f.nodes must be a non-empty object of nodes, got an object'],
    ['unknown start', wf({ start: 'zz' }), 'workflows.f.start: no node "zz" in this workflow (nodes: a)'],
    ['unknown next', wf({ nodes: { a: node([], { next: 'b' }) } }), 'workflows.f.nodes.a.next: no node "b" in this workflow (nodes: a)'],
    ['cards not an array', wf({ nodes: { a: { cards: {} } } }), 'workflows.f.nodes.a.cards must be an array of cards, got an object'],
    ['unknown node property', wf({ nodes: { 'my node': { cards: [], then: 'x' } } }), 'workflows.f.nodes["my node"]: unknown property "then" (allowed: cards, next)'],
    ['unknown card type', cards({ type: 'wait' }), 'workflows.f.nodes.a.cards[0].type must be one of say, execute, action, capture, transition, end, knowledge, handoff, agent, got "wait"'],
    ['unknown card property', cards({ type: 'end', to: 'b' }), 'workflows.f.nodes.a.cards[0] (end): unknown property "to" (allowed: type)'],
    ['say with payload and text', cards({ type: 'say', text: 'a', payload: { type: 'text', text: 'b' } }), 'workflows.f.nodes.a.cards[0] (say): needs exactly one of `payload` or `text`'],
    ['say with a bad payload type', cards({ type: 'say', payload: { type: 'txt', text: 'b' } }), /^workflows\.f\.nodes\.a\.cards\[0\]\.payload\.type must be one of text, markdown, .*, got "txt"$/],
    ['say payload with a function', cards({ type: 'say', payload: { type: 'text', text: () => 1 } }), 'workflows.f.nodes.a.cards[0].payload.text must be JSON data, got a function'],
    ['unclosed template', cards({ type: 'say', text: 'Hi {{ vars.name' }), 'workflows.f.nodes.a.cards[0].text: invalid template: unclosed "{{" in template "Hi {{ vars.name"'],
    ['template syntax error', cards({ type: 'say', payload: { type: 'card', title: 'x', actions: [{ action: 'say', label: '{{ 1 + }}', value: 'v' }] } }), /^workflows\.f\.nodes\.a\.cards\[0\]\.payload\.actions\[0\]\.label: invalid template: /],
    ['execute syntax error', cards({ type: 'execute', code: 'if (' }), /^workflows\.f\.nodes\.a\.cards\[0\]\.code: /],
    ['unknown action', cards({ type: 'action', action: 'nope' }), 'workflows.f.nodes.a.cards[0].action: unknown action "nope" (the bot exports no actions)'],
    ['action declaration with a bad input schema', { actions: { find: { handler: () => 1, input: 'string' } } }, 'actions.find.input must be a JSON schema object, e.g. { type: \'object\', properties: { orderId: { type: \'string\' } } }'],
    ['action declaration with an unknown key', { actions: { find: { handler: () => 1, schema: {} } } }, 'actions.find: unknown property "schema" (allowed: handler, description, input)'],
    ['guardrails not an object', { guardrails: 'be nice' }, 'guardrails must be an object { instructions?, refuse?, maxAnswerChars? }, got a string'],
    ['guardrails refuse not strings', { guardrails: { refuse: [1] } }, 'guardrails.refuse must be an array of topics (strings)'],
    ['guardrails maxAnswerChars too small', { guardrails: { maxAnswerChars: 5 } }, 'guardrails.maxAnswerChars must be an integer ≥ 20'],
    ['agent without instructions', cards({ type: 'agent' }), 'workflows.f.nodes.a.cards[0].instructions must be a non-empty string, got undefined'],
    ['agent knowledge not a list', cards({ type: 'agent', instructions: 'x', knowledge: 'all' }), 'workflows.f.nodes.a.cards[0].knowledge must be true (all knowledge bases) or a non-empty array of knowledge base names or ids'],
    ['agent model empty', cards({ type: 'agent', instructions: 'x', model: [] }), "workflows.f.nodes.a.cards[0].model must be a model id or preset ('best', 'fast'), or a non-empty array of them (a fallback list)"],
    ['agent unknown tool', cards({ type: 'agent', instructions: 'x', tools: ['nope'] }), 'workflows.f.nodes.a.cards[0].tools[0]: unknown action "nope" (the bot exports no actions)'],
    ['agent handoff not a boolean', cards({ type: 'agent', instructions: 'x', handoff: 'yes' }), 'workflows.f.nodes.a.cards[0].handoff must be true or false'],
    ['capture without variable', cards({ type: 'capture' }), 'workflows.f.nodes.a.cards[0].variable must be a non-empty string, got undefined'],
    ['capture pattern without pattern', cards({ type: 'capture', variable: 'v', validate: { type: 'pattern' } }), 'workflows.f.nodes.a.cards[0].validate.pattern must be a non-empty string, got undefined'],
    ['capture validate type', cards({ type: 'capture', variable: 'v', validate: { type: 'date' } }), 'workflows.f.nodes.a.cards[0].validate.type must be one of text, number, email, pattern, got "date"'],
    ['capture maxRetries', cards({ type: 'capture', variable: 'v', maxRetries: -1 }), 'workflows.f.nodes.a.cards[0].maxRetries must be an integer ≥ 0, got -1'],
    ['transition to unknown node', cards({ type: 'transition', conditions: [{ when: 'true', to: 'zz' }] }), 'workflows.f.nodes.a.cards[0].conditions[0].to: no node "zz" in this workflow (nodes: a, b)'],
    ['transition else to unknown node', cards({ type: 'transition', else: 'zz' }), 'workflows.f.nodes.a.cards[0].else: no node "zz" in this workflow (nodes: a, b)'],
    ['transition with nothing', cards({ type: 'transition', conditions: [] }), 'workflows.f.nodes.a.cards[0] (transition): needs at least one condition or an `else`'],
    ['invalid condition', cards({ type: 'transition', conditions: [{ when: 'vars.a ===', to: 'b' }] }), /^workflows\.f\.nodes\.a\.cards\[0\]\.conditions\[0\]\.when: invalid expression: /],
  ]
  it.each(cases)('rejects %s', (_name, mod, message) => {
    const api = parleyPrelude(fakeHost().host, { previewOf, methods: PASSED_THROUGH_METHODS })
    let thrown: unknown
    try {
      api.load(mod)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(Error)
    if (typeof message === 'string') expect((thrown as Error).message).toBe(message)
    else expect((thrown as Error).message).toMatch(message)
  })

  it('keeps the previous bot when a new module does not load', async () => {
    const t = setup({ hooks: { afterIncoming: (ctx: Json) => void (ctx.state.user.seen = true) } })
    expect(() => t.api.load({ hooks: { nope: () => {} } })).toThrow(/unknown hook/)
    const out = await t.turn(messageEvent('hi'))
    expect(out.state.user).toEqual({ seen: true })
  })

  it('snapshots workflow definitions at load (later mutation by the module has no effect)', async () => {
    const workflows = { f: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'say', text: 'original' }] } } } }
    const t = setup({ workflows })
    ;(workflows.f.nodes.a.cards[0] as Json).text = 'mutated'
    await t.turn(messageEvent('hi'))
    expect(t.sent()).toEqual([{ type: 'text', text: 'original' }])
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('hooks', () => {
  it('a hook that fails with null while its run was refused memory is recorded as out of memory (what QuickJS throws then), not as "null"', async () => {
    for (const refused of [true, false]) {
      const t = setup({ hooks: { afterIncoming: () => { throw null } } })
      t.host.outOfMemory = () => refused
      const out = await t.turn(messageEvent('x'))
      expect(out.errors).toEqual([refused ? 'hooks.afterIncoming: out of memory: it used more than its memory limit (PARLEY_BOT_MEMORY_MB)' : 'hooks.afterIncoming: null'])
    }
  })

  it('client.generateText passes the input, the event\'s user and what is left of the unit\'s budget to the host', async () => {
    const t = setup({
      hooks: { afterIncoming: async (ctx: Json) => ctx.client.createMessage({ payload: { type: 'text', text: (await ctx.client.generateText({ messages: [{ role: 'user', content: 'hi' }] })).output } }) },
    }, { generateText: () => ({ output: 'hello', metadata: {} }) })
    const out = await t.turn(messageEvent('x'), { budgetMs: 800 })
    expect(out.errors).toEqual([])
    expect(t.sent()).toEqual([{ type: 'text', text: 'hello' }])
    const call = t.calls.find((c) => c.method === 'generateText')!
    expect(call.args.input).toEqual({ messages: [{ role: 'user', content: 'hi' }] })
    expect(call.args.userId).toBe('user-1')
    expect(call.args.budgetMs).toBeGreaterThan(0)
    expect(call.args.budgetMs).toBeLessThanOrEqual(800)
  })

  it('client.generateTextStream reads the host\'s chunks with for await: several reads, then the end; a failure after some chunks comes after them', async () => {
    const reads: Json[] = [
      { chunks: [{ output: 'a' }, { output: 'b' }], done: false },
      { chunks: [{ output: 'c' }], done: false },
      { chunks: [{ output: '', finished: true, metadata: { model: 'm' } }], done: true },
    ]
    const run = async (failAfter?: number) => {
      let n = 0
      const t = setup({
        hooks: {
          afterIncoming: async (ctx: Json) => {
            let text = ''
            try {
              for await (const chunk of ctx.client.generateTextStream({ messages: [{ role: 'user', content: 'hi' }] })) text += chunk.finished ? `|${chunk.metadata.model}` : chunk.output
            } catch (err) {
              text += `|failed: ${(err as Error).message}`
            }
            await ctx.client.createMessage({ payload: { type: 'text', text } })
          },
        },
      }, {
        generateTextStream: () => ({ streamId: 's1' }),
        readTextStream: (args) => {
          expect(args).toEqual({ streamId: 's1' })
          if (failAfter !== undefined && n === failAfter) throw new Error('OperationTimeout: the provider did not answer in time')
          return reads[n++]
        },
      })
      expect((await t.turn(messageEvent('x'))).errors).toEqual([])
      return { text: t.sent()[0]!.text, methods: t.calls.map((c) => c.method) }
    }
    expect(await run()).toEqual({ text: 'abc|m', methods: ['generateTextStream', 'readTextStream', 'readTextStream', 'readTextStream', 'createMessage'] })
    expect((await run(1)).text).toBe('ab|failed: OperationTimeout: the provider did not answer in time')
  })

  it('beforeIncoming can change the payload', async () => {
    const t = setup({
      hooks: {
        beforeIncoming: (ctx: Json) => {
          ctx.event.payload = { type: 'text', text: ctx.event.payload.text.toUpperCase() }
        },
      },
    })
    expect(await t.beforeIncoming(messageEvent('hello'))).toEqual({ payload: { type: 'text', text: 'HELLO' }, stop: false })
  })

  it('beforeIncoming can stop the event', async () => {
    const t = setup({ hooks: { beforeIncoming: async (ctx: Json) => (ctx.event.preview.includes('spam') ? { stop: true } : undefined) } })
    expect(await t.beforeIncoming(messageEvent('buy spam'))).toEqual({ payload: { type: 'text', text: 'buy spam' }, stop: true })
    expect((await t.beforeIncoming(messageEvent('ok'))).stop).toBe(false)
  })

  it('beforeIncoming receives the full ctx and runs under a budget', async () => {
    let seen: Json = {}
    let remaining = NaN
    const t = setup({
      actions: { double: (_ctx: Json, n: number) => n * 2 },
      hooks: {
        beforeIncoming: async (ctx: Json) => {
          remaining = t.remaining()
          seen = { sameState: ctx.state === ctx.event.state, direction: ctx.event.direction, client: Object.keys(ctx.client).sort(), doubled: await ctx.actions.double(21) }
        },
      },
    })
    await t.beforeIncoming(messageEvent('x'))
    expect(seen).toEqual({
      sameState: true,
      direction: 'incoming',
      client: [
        ...[
          'addParticipant', 'callAction', 'createConversation', 'createEvent', 'createMessage', 'createUser', 'deleteMessage', 'getConversation', 'getMessage', 'getOrCreateConversation', 'getOrCreateUser', 'getParticipant', 'getUser', 'listConversations', 'listMessages', 'listParticipants', 'listTagValues', 'listUsers', 'readWebhookBody', 'removeParticipant', 'searchKnowledge', 'generateText', 'generateTextStream', 'startHandoff', 'endHandoff', 'startTypingIndicator', 'stopTypingIndicator', 'updateConversation', 'updateMessage', 'updateUser',
          // tables
          'listTables', 'getTable', 'getOrCreateTable', 'createTable', 'duplicateTable', 'exportTable', 'importTable', 'getTableJobs',
          'updateTable', 'renameTableColumn', 'deleteTable', 'getTableRow', 'findTableRows', 'createTableRows', 'updateTableRows', 'upsertTableRows', 'deleteTableRows',
        ].sort(),
      ],
      doubled: 42,
    })
    // The run's own budget, which the host set at its start: the hook starting at once keeps it without a call out.
    expect(remaining).toBeGreaterThan(1000 - 50)
    expect(remaining).toBeLessThanOrEqual(1000)
    expect(t.budgets).toEqual([])
  })

  it('a failing beforeIncoming keeps the original payload and does not stop', async () => {
    const t = setup({
      hooks: {
        beforeIncoming: (ctx: Json) => {
          ctx.event.payload.text = 'half-changed'
          throw new Error('boom')
        },
      },
    })
    expect(await t.beforeIncoming(messageEvent('original'))).toEqual({ payload: { type: 'text', text: 'original' }, stop: false })
    expect(t.logs).toEqual([{ level: 'error', text: 'hooks.beforeIncoming: boom' }])
  })

  it('beforeIncoming cannot replace a message payload by a non-payload', async () => {
    const t = setup({ hooks: { beforeIncoming: (ctx: Json) => void (ctx.event.payload = 'nope') } })
    const out = (await t.beforeIncoming(messageEvent('original'))) as { payload: Json; stop: boolean; errors?: string[] }
    // The output names the error (the host counts it in /metrics), as a turn's output does.
    expect(out).toEqual({ payload: { type: 'text', text: 'original' }, stop: false, errors: [expect.stringMatching(/^hooks\.beforeIncoming: event\.payload must stay/)] })
    expect(t.logs[0]!.text).toMatch(/^hooks\.beforeIncoming: event\.payload must stay a message payload object/)
  })

  it('beforeIncoming may change a custom event payload to any object', async () => {
    const t = setup({ hooks: { beforeIncoming: (ctx: Json) => void (ctx.event.payload.checked = true) } })
    expect(await t.beforeIncoming(customEvent({ name: 'ping' }))).toEqual({ payload: { name: 'ping', checked: true }, stop: false })
  })

  it('without a beforeIncoming hook the payload passes unchanged', async () => {
    const t = setup({})
    expect(await t.beforeIncoming(messageEvent('same'))).toEqual({ payload: { type: 'text', text: 'same' }, stop: false })
    expect(t.budgets).toEqual([])
  })

  it('afterIncoming then afterTurnEnd run, each under a budget, and their state changes are returned', async () => {
    const order: string[] = []
    const remaining: number[] = []
    const t = setup({
      hooks: {
        afterIncoming: (ctx: Json) => {
          remaining.push(t.remaining())
          order.push('afterIncoming:' + ctx.event.preview)
          ctx.state.user.count = (ctx.state.user.count ?? 0) + 1
          ctx.event.state.conversation.last = ctx.event.preview
          // Longer than 1% of the budget: the next hook's budget is then set anew.
          const until = Date.now() + 60
          while (Date.now() < until) { /* spin */ }
        },
        afterTurnEnd: (ctx: Json) => {
          remaining.push(t.remaining())
          order.push('afterTurnEnd')
          ctx.state.bot.turns = (ctx.state.bot.turns ?? 0) + 1
        },
      },
    })
    const first = await t.turn(messageEvent('one'), { budgetMs: 750 })
    expect(first).toEqual({ state: { user: { count: 1 }, conversation: { last: 'one' }, bot: { turns: 1 } }, flow: null, errors: [] })
    const second = await t.turn(messageEvent('two', first.state))
    expect(second.state).toEqual({ user: { count: 2 }, conversation: { last: 'two' }, bot: { turns: 2 } })
    expect(order).toEqual(['afterIncoming:one', 'afterTurnEnd', 'afterIncoming:two', 'afterTurnEnd'])
    // Each hook starts with its whole budget (750 ms, then the default 1000): the first on the run's own, the second on
    // one set for it after the first's 60 ms (without it, the second would have 60 ms less; 30 ms of slack for a busy machine).
    expect(remaining).toHaveLength(4)
    remaining.forEach((ms, i) => expect(ms, `hook ${i}`).toBeGreaterThan([750, 750, 1000, 1000][i]! - 30))
    expect(t.budgets.slice(0, 1)).toEqual([750])
  })

  it('a failing hook is recorded and the turn goes on', async () => {
    const t = setup({
      hooks: {
        afterIncoming: (ctx: Json) => {
          ctx.state.user.before = true
          throw new TypeError('bad thing')
        },
        afterTurnEnd: (ctx: Json) => {
          ctx.state.user.after = true
          throw 'a string'
        },
      },
    })
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual(['hooks.afterIncoming: bad thing', 'hooks.afterTurnEnd: a string'])
    expect(out.state.user).toEqual({ before: true, after: true })
    expect(t.logs.map((l) => l.level)).toEqual(['error', 'error'])
  })

  it('hooks of a custom event see type custom and its payload', async () => {
    let seen: Json = {}
    const t = setup({ hooks: { afterIncoming: (ctx: Json) => void (seen = { type: ctx.event.type, payload: ctx.event.payload, messageId: ctx.event.messageId }) } })
    await t.turn(customEvent({ name: 'cart', items: 2 }))
    expect(seen).toEqual({ type: 'custom', payload: { name: 'cart', items: 2 }, messageId: undefined })
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('client and outgoing hooks', () => {
  it('createMessage sends through beforeOutgoing and afterOutgoing with a complete outgoing event', async () => {
    const seen: Json[] = []
    let incomingId = ''
    let result: unknown
    const t = setup({
      hooks: {
        afterIncoming: async (ctx: Json) => {
          incomingId = ctx.event.id
          result = await ctx.client.createMessage({ conversationId: ctx.event.conversationId, payload: { type: 'text', text: 'hi there' }, metadata: { k: 1 } })
        },
        beforeOutgoing: (ctx: Json) => {
          seen.push({ hook: 'before', ...ctx.event, stateIsTurnState: ctx.state === ctx.event.state })
          ctx.state.conversation.outgoing = (ctx.state.conversation.outgoing ?? 0) + 1
        },
        afterOutgoing: (ctx: Json) => {
          seen.push({ hook: 'after', ...ctx.event })
        },
      },
    })
    const out = await t.turn(messageEvent('hello'))
    expect(out.errors).toEqual([])
    expect(t.calls).toEqual([{ method: 'createMessage', args: { conversationId: 'conv-1', payload: { type: 'text', text: 'hi there' }, metadata: { k: 1 } } }])
    const [before, after] = seen as [Json, Json]
    expect(before).toMatchObject({
      hook: 'before',
      botId: 'bot-1',
      conversationId: 'conv-1',
      direction: 'outgoing',
      integration: 'chat',
      payload: { type: 'text', text: 'hi there' },
      preview: 'hi there',
      type: 'text',
      tags: { conversation: { lang: 'en' }, message: {}, user: { vip: 'yes' } },
      stateIsTurnState: true,
    })
    expect(before.messageId).toBeUndefined()
    expect(before.userId).toBeUndefined()
    expect(before.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(before.id).not.toBe(incomingId)
    expect(Number.isNaN(Date.parse(before.createdOn))).toBe(false)
    expect(after).toMatchObject({ hook: 'after', direction: 'outgoing', messageId: 'msg-1', userId: 'bot-user', id: before.id })
    expect(result).toEqual({ message: { id: 'msg-1', userId: 'bot-user', createdAt: '2024-05-01T00:00:00.000Z', conversationId: 'conv-1', payload: { type: 'text', text: 'hi there' }, metadata: { k: 1 } } })
    expect(out.state.conversation).toEqual({ outgoing: 1 })
  })

  it('createMessage accepts the runtime shape { type, payload } and defaults the conversation', async () => {
    const t = setup({ hooks: { afterIncoming: (ctx: Json) => ctx.client.createMessage({ type: 'image', payload: { imageUrl: 'https://x.test/a.png' } }) } })
    await t.turn(messageEvent('x'))
    expect(t.calls).toEqual([{ method: 'createMessage', args: { conversationId: 'conv-1', payload: { type: 'image', imageUrl: 'https://x.test/a.png' } } }])
  })

  it('beforeOutgoing can change the payload; the change is what is sent and what afterOutgoing sees', async () => {
    let after: Json = {}
    const t = setup({
      hooks: {
        afterIncoming: (ctx: Json) => ctx.client.createMessage({ payload: { type: 'text', text: 'hello' } }),
        beforeOutgoing: (ctx: Json) => {
          ctx.event.payload = { type: 'markdown', markdown: '**' + ctx.event.payload.text + '**' }
        },
        afterOutgoing: (ctx: Json) => void (after = { type: ctx.event.type, preview: ctx.event.preview, payload: ctx.event.payload }),
      },
    })
    await t.turn(messageEvent('x'))
    expect(t.sent()).toEqual([{ type: 'markdown', markdown: '**hello**' }])
    expect(after).toEqual({ type: 'markdown', preview: 'hello', payload: { type: 'markdown', markdown: '**hello**' } })
  })

  it('beforeOutgoing can stop a message: nothing is sent and createMessage resolves { message: null }', async () => {
    let result: unknown = 'unset'
    let afterRan = false
    const t = setup({
      hooks: {
        afterIncoming: async (ctx: Json) => {
          result = await ctx.client.createMessage({ payload: { type: 'text', text: 'secret' } })
        },
        beforeOutgoing: (ctx: Json) => (ctx.event.preview === 'secret' ? { stop: true } : undefined),
        afterOutgoing: () => void (afterRan = true),
      },
    })
    const out = await t.turn(messageEvent('x'))
    expect(result).toEqual({ message: null })
    expect(t.calls).toEqual([])
    expect(afterRan).toBe(false)
    expect(out.errors).toEqual([])
  })

  it('a failing beforeOutgoing is recorded and the original payload is sent', async () => {
    const t = setup({
      hooks: {
        afterIncoming: (ctx: Json) => ctx.client.createMessage({ payload: { type: 'text', text: 'keep me' } }),
        beforeOutgoing: (ctx: Json) => {
          ctx.event.payload.text = 'changed'
          throw new Error('nope')
        },
      },
    })
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual(['hooks.beforeOutgoing: nope'])
    expect(t.sent()).toEqual([{ type: 'text', text: 'keep me' }])
  })

  it('rejects an invalid payload with a clear error', async () => {
    const t = setup({ hooks: { afterIncoming: (ctx: Json) => ctx.client.createMessage({ payload: { text: 'no type' } }) } })
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual(['hooks.afterIncoming: client.createMessage: payload must be an object with a string `type`, e.g. { type: "text", text: "hi" }'])
    expect(t.calls).toEqual([])
  })

  it('stops send → outgoing hook → send loops', async () => {
    const t = setup({
      hooks: {
        afterIncoming: (ctx: Json) => ctx.client.createMessage({ payload: { type: 'text', text: 'loop' } }),
        afterOutgoing: (ctx: Json) => ctx.client.createMessage({ payload: { type: 'text', text: 'again' } }),
      },
    })
    const out = await t.turn(messageEvent('x'))
    expect(t.sent()).toHaveLength(3)
    expect(out.errors).toEqual(['hooks.afterOutgoing: client.createMessage: messages sent from outgoing hooks are nested more than 3 deep'])
  })

  it('the other client methods call the host with their arguments and return the parsed result', async () => {
    let results: unknown[] = []
    const t = setup({
      hooks: {
        afterIncoming: async (ctx: Json) => {
          results = [
            await ctx.client.createEvent({ payload: { name: 'ping' } }),
            await ctx.client.getMessage({ id: 'm-9' }),
            await ctx.client.listMessages({ conversationId: 'conv-2', nextToken: 't1' }),
            await ctx.client.listMessages(),
            await ctx.client.getConversation({ id: 'conv-1' }),
            await ctx.client.getUser({ id: 'user-1' }),
          ]
        },
      },
    })
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual([])
    expect(t.calls).toEqual([
      { method: 'createEvent', args: { conversationId: 'conv-1', payload: { name: 'ping' } } },
      { method: 'getMessage', args: { id: 'm-9' } },
      { method: 'listMessages', args: { conversationId: 'conv-2', nextToken: 't1' } },
      { method: 'listMessages', args: { conversationId: 'conv-1' } },
      { method: 'getConversation', args: { id: 'conv-1' } },
      { method: 'getUser', args: { id: 'user-1' } },
    ])
    expect(results[1]).toEqual({ echo: { method: 'getMessage', args: { id: 'm-9' } } })
  })

  it('host errors reach user code as rejections', async () => {
    let caught = ''
    const t = setup(
      {
        hooks: {
          afterIncoming: async (ctx: Json) => {
            try {
              await ctx.client.getMessage({ id: 'missing' })
            } catch (err) {
              caught = (err as Error).message
            }
            await ctx.client.getUser({})
          },
        },
      },
      {
        getMessage: () => {
          throw new Error('ResourceNotFound: Message missing not found')
        },
      },
    )
    const out = await t.turn(messageEvent('x'))
    expect(caught).toBe('ResourceNotFound: Message missing not found')
    expect(out.errors).toEqual(['hooks.afterIncoming: client.getUser: id must be a non-empty string'])
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('actions', () => {
  it('are callable from hooks with the same ctx shape', async () => {
    let inner: Json = {}
    const t = setup({
      actions: {
        greet: async (ctx: Json, input: { name: string }) => {
          inner = { event: ctx.event.id, sameState: ctx.state === ctx.event.state, hasClient: typeof ctx.client.createMessage, hasActions: typeof ctx.actions.greet }
          ctx.state.user.greeted = input.name
          return `Hello ${input.name}`
        },
      },
      hooks: {
        afterIncoming: async (ctx: Json) => {
          const text = await ctx.actions.greet({ name: 'Ann' })
          await ctx.client.createMessage({ payload: { type: 'text', text } })
        },
      },
    })
    const event = messageEvent('x')
    const out = await t.turn(event)
    expect(inner).toEqual({ event: event.id, sameState: true, hasClient: 'function', hasActions: 'function' })
    expect(t.sent()).toEqual([{ type: 'text', text: 'Hello Ann' }])
    expect(out.state.user).toEqual({ greeted: 'Ann' })
  })

  it('an action called from user code shares the caller’s deadline (calling actions cannot extend the budget)', async () => {
    const busy = (ms: number) => {
      const end = Date.now() + ms
      while (Date.now() < end) {
        /* spin */
      }
    }
    const deadlines: number[] = []
    const starts: number[] = []
    const t = setup({
      actions: { work: () => { starts.push(Date.now()); deadlines.push(t.deadline()); busy(40) } },
      hooks: {
        afterIncoming: async (ctx: Json) => {
          start = Date.now()
          await ctx.actions.work()
          await ctx.actions.work()
          await ctx.actions.work()
        },
      },
    })
    let start = NaN
    await t.turn(messageEvent('x'), { budgetMs: 1000 })
    // Each action ran under the hook's deadline (start + 1000 ms, give or take the 1% a budget may differ by), never a
    // later one: the third started ~80 ms in, with no more than ~920 ms left.
    expect(deadlines).toHaveLength(3)
    for (const d of deadlines) expect(d).toBeLessThanOrEqual(start + 1000 + 10)
    expect(deadlines[2]! - starts[2]!).toBeLessThanOrEqual(1000 - 75 + 10)
  })

  it('action errors propagate to the calling hook', async () => {
    let caught = ''
    const t = setup({
      actions: {
        fails: () => {
          throw new Error('action failed')
        },
      },
      hooks: {
        afterIncoming: async (ctx: Json) => {
          try {
            await ctx.actions.fails()
          } catch (err) {
            caught = (err as Error).message
          }
        },
      },
    })
    const out = await t.turn(messageEvent('x'))
    expect(caught).toBe('action failed')
    expect(out.errors).toEqual([])
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('workflow cards', () => {
  it('say: text shorthand and payloads whose strings are templates at any depth', async () => {
    const t = setup(
      flowModule({
        a: {
          cards: [
            { type: 'execute', code: 'vars.name = "Zoë"; vars.items = ["a", "b"]; state.user.plan = "pro"' },
            { type: 'say', text: 'Hi {{ vars.name }}, you said "{{ event.preview }}"' },
            {
              type: 'say',
              payload: {
                type: 'carousel',
                items: [
                  {
                    title: '{{ vars.name.toUpperCase() }}',
                    subtitle: 'Plan: {{ state.user.plan }} / {{ vars.items }} / {{ vars.missing }}|',
                    actions: [{ action: 'say', label: 'Pick {{ 1 + 1 }}', value: '{{ event.conversationId }}' }],
                  },
                ],
              },
            },
            { type: 'say', payload: { type: 'location', latitude: 1.5, longitude: 2, title: 'At {{ vars.name }}' } },
          ],
        },
      }),
    )
    const out = await t.turn(messageEvent('hello'))
    expect(out.errors).toEqual([])
    expect(t.sent()).toEqual([
      { type: 'text', text: 'Hi Zoë, you said "hello"' },
      {
        type: 'carousel',
        items: [{ title: 'ZOË', subtitle: 'Plan: pro / ["a","b"] / |', actions: [{ action: 'say', label: 'Pick 2', value: 'conv-1' }] }],
      },
      { type: 'location', latitude: 1.5, longitude: 2, title: 'At Zoë' },
    ])
    expect(out.state.user).toEqual({ plan: 'pro' })
  })

  it('say: outgoing hooks run for card messages', async () => {
    const t = setup(
      flowModule(
        { a: { cards: [{ type: 'say', text: 'one' }, { type: 'say', text: 'two' }] } },
        {
          hooks: {
            beforeOutgoing: (ctx: Json) => (ctx.event.preview === 'two' ? { stop: true } : void (ctx.event.payload.text += '!')),
            afterOutgoing: (ctx: Json) => void (ctx.state.conversation.sent = [...(ctx.state.conversation.sent ?? []), ctx.event.messageId]),
          },
        },
      ),
    )
    const out = await t.turn(messageEvent('x'))
    expect(t.sent()).toEqual([{ type: 'text', text: 'one!' }])
    expect(out.state.conversation).toEqual({ sent: ['msg-1'] })
  })

  it('say: a failing template skips that card only', async () => {
    const t = setup(flowModule({ a: { cards: [{ type: 'say', text: '{{ vars.user.name }}' }, { type: 'say', text: 'next' }] } }))
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toHaveLength(1)
    expect(out.errors[0]).toMatch(/^workflows\.main\.nodes\.a\.cards\[0\] \(say\): template: .*name/)
    expect(t.sent()).toEqual([{ type: 'text', text: 'next' }])
  })

  it('execute: runs async code with event, state, vars, client and actions', async () => {
    const t = setup(
      flowModule(
        {
          a: {
            cards: [
              {
                type: 'execute',
                code: [
                  'vars.sum = await actions.add({ a: 2, b: 3 })',
                  'state.conversation.topic = event.preview',
                  "await client.createMessage({ payload: { type: 'text', text: 'sum=' + vars.sum } })",
                ].join('\n'),
              },
            ],
          },
        },
        { actions: { add: (_ctx: Json, i: { a: number; b: number }) => i.a + i.b } },
      ),
    )
    const out = await t.turn(messageEvent('maths'))
    expect(out.errors).toEqual([])
    expect(t.sent()).toEqual([{ type: 'text', text: 'sum=5' }])
    expect(out.state).toEqual({ user: {}, conversation: { topic: 'maths' }, bot: {}, workflow: { sum: 5 } })
  })

  it('execute: an error is recorded and the next card still runs', async () => {
    const t = setup(flowModule({ a: { cards: [{ type: 'execute', code: 'throw new Error("kaput")' }, { type: 'say', text: 'still here' }] } }))
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual(['workflows.main.nodes.a.cards[0] (execute): kaput'])
    expect(t.sent()).toEqual([{ type: 'text', text: 'still here' }])
  })

  it('action: input strings are templates (a lone {{ expr }} keeps its type); the output goes to vars', async () => {
    let received: unknown
    const t = setup(
      flowModule(
        {
          a: {
            cards: [
              { type: 'execute', code: 'vars.qty = 3; vars.tags = ["x"]' },
              { type: 'action', action: 'order', input: { qty: '{{ vars.qty }}', label: 'qty={{ vars.qty }}', nested: { tags: [' {{ vars.tags }} '], fixed: 7 } }, output: 'receipt' },
              { type: 'say', text: 'Order {{ vars.receipt.id }}' },
              { type: 'action', action: 'order' },
            ],
          },
        },
        {
          actions: {
            order: (ctx: Json, input: unknown) => {
              received ??= input
              return { id: 'ord-1', by: ctx.event.userId }
            },
          },
        },
      ),
    )
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual([])
    expect(received).toEqual({ qty: 3, label: 'qty=3', nested: { tags: [['x']], fixed: 7 } })
    expect(t.sent()).toEqual([{ type: 'text', text: 'Order ord-1' }])
    expect((out.state as Json).workflow.receipt).toEqual({ id: 'ord-1', by: 'user-1' })
  })

  it('action: a failing action is recorded and the flow goes on', async () => {
    const t = setup(
      flowModule(
        { a: { cards: [{ type: 'action', action: 'fail', output: 'r' }, { type: 'say', text: 'r={{ vars.r }}' }] } },
        {
          actions: {
            fail: async () => {
              throw new Error('service down')
            },
          },
        },
      ),
    )
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual(['workflows.main.nodes.a.cards[0] (action): service down'])
    expect(t.sent()).toEqual([{ type: 'text', text: 'r=' }])
  })

  it('transition: the first true condition jumps, else falls back, none falls through; next and end', async () => {
    const mod = flowModule({
      start: {
        cards: [
          { type: 'execute', code: 'vars.n = Number(event.preview)' },
          {
            type: 'transition',
            conditions: [
              { when: 'vars.n > 100', to: 'big' },
              { when: 'vars.n > 10', to: 'medium' },
            ],
          },
          { type: 'transition', conditions: [{ when: 'vars.n < 0', to: 'negative' }], else: 'small' },
          { type: 'say', text: 'unreachable' },
        ],
      },
      big: { cards: [{ type: 'say', text: 'big' }], next: 'done' },
      medium: { cards: [{ type: 'say', text: 'medium' }, { type: 'end' }, { type: 'say', text: 'after end' }], next: 'done' },
      small: { cards: [{ type: 'say', text: 'small' }] },
      negative: { cards: [{ type: 'say', text: 'negative' }] },
      done: { cards: [{ type: 'say', text: 'done' }] },
    })
    const run = async (text: string) => {
      const t = setup(mod)
      const out = await t.turn(messageEvent(text))
      expect(out.errors).toEqual([])
      expect(out.flow).toBeNull()
      return t.sent().map((p) => p.text)
    }
    expect(await run('500')).toEqual(['big', 'done'])
    expect(await run('50')).toEqual(['medium'])
    expect(await run('-3')).toEqual(['negative'])
    expect(await run('5')).toEqual(['small'])
  })

  it('transition: a throwing condition is recorded and counts as false', async () => {
    const t = setup(
      flowModule({
        a: { cards: [{ type: 'transition', conditions: [{ when: 'vars.x.y', to: 'b' }, { when: 'true', to: 'c' }] }] },
        b: { cards: [{ type: 'say', text: 'b' }] },
        c: { cards: [{ type: 'say', text: 'c' }] },
      }),
    )
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toHaveLength(1)
    expect(out.errors[0]).toMatch(/^workflows\.main\.nodes\.a\.cards\[0\] \(transition\) conditions\[0\]: /)
    expect(t.sent()).toEqual([{ type: 'text', text: 'c' }])
  })

  it('guards against node loops: the flow ends with an error, the turn goes on', async () => {
    const t = setup(
      flowModule(
        {
          ping: { cards: [{ type: 'execute', code: 'vars.visits = (vars.visits || 0) + 1' }], next: 'pong' },
          pong: { cards: [{ type: 'transition', else: 'ping' }] },
        },
        { hooks: { afterTurnEnd: (ctx: Json) => void (ctx.state.bot.ended = true) } },
      ),
    )
    const out = await t.turn(messageEvent('x'))
    expect(out.errors).toEqual(['workflows.main: more than 100 node visits in one turn (a transition loop?); the flow was ended'])
    expect(out.flow).toBeNull()
    expect((out.state as Json).workflow.visits).toBe(50)
    expect(out.state.bot).toEqual({ ended: true })
  })

  it('every piece of user code starts with its whole budget', async () => {
    // Each piece calls spin(): it notes what the host would still give it, then takes 8 ms, more than the 1% of the
    // budget (3.21 ms) within which a budget is not set again: without a fresh budget for each, the fourth would see
    // ~24 ms less than its budget (the bound leaves ~16 ms of slack for a busy machine).
    const seen: number[] = []
    const g = globalThis as { spin?: () => string }
    g.spin = () => {
      seen.push(t.remaining())
      const until = Date.now() + 8
      while (Date.now() < until) { /* spin */ }
      return ''
    }
    const t = setup(
      flowModule(
        {
          a: {
            cards: [
              { type: 'say', text: 'hi{{ spin() }}' },
              { type: 'execute', code: 'spin(); vars.a = 1' },
              { type: 'action', action: 'noop' },
              { type: 'transition', conditions: [{ when: 'spin() || false', to: 'a' }] },
            ],
          },
        },
        { actions: { noop: () => g.spin!() && null }, hooks: { afterIncoming: () => void g.spin!() } },
      ),
    )
    try {
      const out = await t.turn(messageEvent('x'), { budgetMs: 321 })
      expect(out.errors).toEqual([])
    } finally {
      delete g.spin
    }
    // say template, execute, action, condition, afterIncoming
    expect(seen).toHaveLength(5)
    for (const ms of seen) expect(ms).toBeGreaterThan(321 - 20)
    expect(t.budgets.every((ms) => ms === 321)).toBe(true)
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('capture', () => {
  const captureModule = (capture: Json) =>
    flowModule({
      ask: {
        cards: [{ type: 'say', text: 'Welcome' }, { type: 'capture', variable: 'answer', ...capture }, { type: 'say', text: 'Got {{ String(vars.answer) }}' }],
      },
    })

  it('prompts, waits, then stores a valid answer and continues on the next turn', async () => {
    const t = setup(captureModule({ prompt: 'How old are you, {{ event.userId }}?', validate: { type: 'number' } }))
    const first = await t.turn(messageEvent('start'))
    expect(first.errors).toEqual([])
    expect(first.flow).toEqual({ flowId: 'main', nodeId: 'ask', cardIndex: 1, waiting: 'capture', retries: 0 })
    expect(t.sent()).toEqual([
      { type: 'text', text: 'Welcome' },
      { type: 'text', text: 'How old are you, user-1?' },
    ])
    const second = await t.turn(messageEvent(' 42 ', first.state), { flow: first.flow })
    expect(second.flow).toBeNull()
    expect((second.state as Json).workflow).toEqual({ answer: 42 })
    expect(t.sent().at(-1)).toEqual({ type: 'text', text: 'Got 42' })
  })

  it('re-prompts invalid answers up to maxRetries, then continues with the variable undefined', async () => {
    const t = setup(captureModule({ prompt: 'Email?', retryPrompt: { type: 'text', text: 'Not an email: {{ event.preview }}' }, validate: { type: 'email' }, maxRetries: 2 }))
    let out = await t.turn(messageEvent('go'))
    out = await t.turn(messageEvent('nope', out.state), { flow: out.flow })
    expect(out.flow).toMatchObject({ retries: 1, waiting: 'capture' })
    out = await t.turn(messageEvent('still@nope', out.state), { flow: out.flow })
    expect(out.flow).toMatchObject({ retries: 2 })
    out = await t.turn(messageEvent('never', out.state), { flow: out.flow })
    expect(out.flow).toBeNull()
    expect(t.sent().map((p) => p.text)).toEqual(['Welcome', 'Email?', 'Not an email: nope', 'Not an email: still@nope', 'Got undefined'])
    expect((out.state as Json).workflow).toEqual({})
  })

  it('the prompt is repeated when there is no retryPrompt; a valid answer after a retry is kept', async () => {
    const t = setup(captureModule({ prompt: { type: 'choice', text: 'Color?', options: [{ label: 'Red', value: 'red' }] }, validate: { type: 'pattern', pattern: '^(red|blue)$', flags: 'i' } }))
    let out = await t.turn(messageEvent('go'))
    out = await t.turn(messageEvent('green', out.state), { flow: out.flow })
    out = await t.turn(messageEvent('RED', out.state), { flow: out.flow })
    expect(out.flow).toBeNull()
    expect((out.state as Json).workflow).toEqual({ answer: 'RED' })
    expect(t.sent()).toEqual([
      { type: 'text', text: 'Welcome' },
      { type: 'choice', text: 'Color?', options: [{ label: 'Red', value: 'red' }] },
      { type: 'choice', text: 'Color?', options: [{ label: 'Red', value: 'red' }] },
      { type: 'text', text: 'Got RED' },
    ])
  })

  it('text (default) validation accepts any non-empty message preview; maxRetries 0 gives up at once', async () => {
    const t = setup(captureModule({ maxRetries: 0, validate: { type: 'number' } }))
    let out = await t.turn(messageEvent('go'))
    out = await t.turn(messageEvent('abc', out.state), { flow: out.flow })
    expect(out.flow).toBeNull()
    expect(t.sent().at(-1)).toEqual({ type: 'text', text: 'Got undefined' })

    const t2 = setup(captureModule({}))
    let o2 = await t2.turn(messageEvent('go'))
    o2 = await t2.turn(messageEvent({ type: 'image', imageUrl: 'https://x.test/i.png' }, o2.state), { flow: o2.flow })
    expect((o2.state as Json).workflow).toEqual({ answer: '[image] https://x.test/i.png' })
  })

  it('a waiting capture wins over message triggers, and state survives across the turns', async () => {
    const t = setup({
      workflows: {
        ask: { trigger: { type: 'message', text: 'ask' }, nodes: { a: { cards: [{ type: 'capture', variable: 'name', prompt: 'Name?' }, { type: 'execute', code: 'state.user.name = vars.name' }] } } },
        other: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'say', text: 'other flow' }] } } },
      },
    })
    let out = await t.turn(messageEvent('ASK'))
    out.state.conversation.kept = true
    out = await t.turn(messageEvent('Ann', out.state), { flow: out.flow })
    expect(out.state).toMatchObject({ user: { name: 'Ann' }, conversation: { kept: true }, workflow: { name: 'Ann' } })
    expect(t.sent().map((p) => p.text)).toEqual(['Name?'])
    await t.turn(messageEvent('hello', out.state), { flow: out.flow })
    expect(t.sent().map((p) => p.text)).toEqual(['Name?', 'other flow'])
  })

  it('a custom event does not answer a capture: it keeps waiting unless an event trigger starts another flow', async () => {
    const t = setup({
      workflows: {
        ask: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'capture', variable: 'v', prompt: 'V?' }] } } },
        reset: { trigger: { type: 'event', name: 'reset' }, nodes: { a: { cards: [{ type: 'say', text: 'reset!' }] } } },
      },
    })
    const first = await t.turn(messageEvent('go'))
    const kept = await t.turn(customEvent({ name: 'other' }, first.state), { flow: first.flow })
    expect(kept.flow).toEqual(first.flow)
    const replaced = await t.turn(customEvent({ name: 'reset' }, first.state), { flow: first.flow })
    expect(replaced.flow).toBeNull()
    expect(t.sent().map((p) => p.text)).toEqual(['V?', 'reset!'])
  })

  it('a saved position that no longer matches the code is dropped with a warning', async () => {
    const t = setup(flowModule({ a: { cards: [{ type: 'say', text: 'fresh start' }] } }))
    const out = await t.turn(messageEvent('x'), { flow: { flowId: 'gone', nodeId: 'a', cardIndex: 0, waiting: 'capture', retries: 0 } })
    expect(out.flow).toBeNull()
    expect(t.sent()).toEqual([{ type: 'text', text: 'fresh start' }])
    expect(t.logs).toEqual([{ level: 'warn', text: expect.stringMatching(/saved workflow position .*gone.* was dropped/) }])
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('triggers', () => {
  const triggerModule = (hooks: Json = {}) => ({
    hooks,
    workflows: {
      welcome: { trigger: { type: 'conversationStarted' }, nodes: { hello: { cards: [{ type: 'say', text: 'welcome' }] } } },
      help: { trigger: [{ type: 'message', text: 'Help' }, { type: 'message', pattern: '^(support|assist)', flags: 'i' }], start: 'b', nodes: { a: { cards: [{ type: 'say', text: 'never' }] }, b: { cards: [{ type: 'say', text: 'help' }] } } },
      order: { trigger: { type: 'event', name: 'order.created' }, nodes: { o: { cards: [{ type: 'say', text: 'order {{ event.payload.id }}' }] } } },
      fallback: { trigger: { type: 'message' }, nodes: { f: { cards: [{ type: 'say', text: 'fallback' }] } } },
    },
  })

  const triggerOf = async (event: Json, conversationStarted = false) => {
    let trigger: unknown
    const t = setup(triggerModule({ afterIncoming: (ctx: Json) => void (trigger = ctx.event.trigger), beforeOutgoing: (ctx: Json) => void (ctx.state.bot.outgoingTrigger = ctx.event.trigger) }))
    const out = await t.turn(event, { conversationStarted })
    return { trigger, sent: t.sent().map((p) => p.text), out }
  }

  it('the conversation start runs only conversationStarted triggers, without the incoming hooks; messages never fire them', async () => {
    const { trigger, sent, out } = await triggerOf({ ...messageEvent(''), type: 'conversationStarted', payload: {} }, true)
    expect(sent).toEqual(['welcome'])
    // afterIncoming did not run; beforeOutgoing saw the trigger
    expect(trigger).toBeUndefined()
    expect(out.state.bot).toEqual({ outgoingTrigger: { flowId: 'welcome', nodeId: 'hello', eventName: 'conversationStarted', conversationId: 'conv-1', userId: 'user-1', integration: 'chat' } })
    // a first message is answered for what it says (the `help` trigger), not by the greeting
    expect((await triggerOf(messageEvent('help'))).sent).toEqual(['help'])
  })

  it('message text matches the trimmed preview case-insensitively and starts at `start`', async () => {
    const { trigger, sent } = await triggerOf(messageEvent('  hELP '))
    expect(sent).toEqual(['help'])
    expect(trigger).toEqual({ flowId: 'help', nodeId: 'b', eventName: 'message', conversationId: 'conv-1', userId: 'user-1', integration: 'chat' })
  })

  it('message pattern matches with its flags; other messages reach later flows', async () => {
    expect((await triggerOf(messageEvent('SUPPORT please'))).sent).toEqual(['help'])
    expect((await triggerOf(messageEvent('helpme'))).sent).toEqual(['fallback'])
    expect((await triggerOf(messageEvent({ type: 'image', imageUrl: 'https://x.test/a.png' }))).sent).toEqual(['fallback'])
  })

  it('event triggers fire on custom events by payload.name or payload.type, never on messages', async () => {
    const byName = await triggerOf(customEvent({ name: 'order.created', id: 'o-7' }))
    expect(byName.sent).toEqual(['order o-7'])
    expect(byName.trigger).toEqual({ flowId: 'order', nodeId: 'o', eventName: 'order.created', conversationId: 'conv-1', userId: 'user-1', integration: 'chat' })
    expect((await triggerOf(customEvent({ type: 'order.created', id: 'o-8' }))).sent).toEqual(['order o-8'])
    expect((await triggerOf(customEvent({ name: 'other' }))).sent).toEqual([])
    expect((await triggerOf(customEvent({ name: 'other' }))).trigger).toBeUndefined()
    expect((await triggerOf(messageEvent('order.created'))).sent).toEqual(['fallback'])
  })

  it('starting a flow resets the workflow variables', async () => {
    const t = setup(flowModule({ a: { cards: [{ type: 'execute', code: 'vars.count = (vars.count || 0) + 1; vars.seen = state.workflow === vars' }] } }))
    const state = { ...emptyState(), workflow: { count: 10, old: true } }
    const out = await t.turn(messageEvent('x', state))
    expect((out.state as Json).workflow).toEqual({ count: 1, seen: true })
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('state', () => {
  it('state that cannot be saved is reported and the turn’s starting state is returned', async () => {
    const t = setup({
      hooks: {
        afterIncoming: (ctx: Json) => {
          ctx.state.user.self = ctx.state.user
        },
      },
    })
    const out = await t.turn(messageEvent('x', { user: { keep: 1 }, conversation: {}, bot: {} }))
    expect(out.state).toEqual({ user: { keep: 1 }, conversation: {}, bot: {} })
    expect(out.errors).toHaveLength(1)
    expect(out.errors[0]).toMatch(/^event\.state: is not JSON-serializable/)
  })

  it('replaced state parts are reported and restored', async () => {
    const t = setup({ hooks: { afterIncoming: (ctx: Json) => void (ctx.state.user = 'oops') } })
    const out = await t.turn(messageEvent('x', { user: { a: 1 }, conversation: {}, bot: {} }))
    expect(out.state.user).toEqual({ a: 1 })
    expect(out.errors).toEqual(['event.state.user: must be an object; its changes in this turn were discarded'])
  })

  it('missing state parts are created', async () => {
    const t = setup({})
    const event = messageEvent('x')
    event.state = { user: { a: 1 } }
    expect((await t.turn(event)).state).toEqual({ user: { a: 1 }, conversation: {}, bot: {} })
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('self-containment', () => {
  it('parleyPrelude and previewOf re-created from their source text run a full turn', async () => {
    const preludeSrc = String(parleyPrelude)
    const previewSrc = String(previewOf)
    const make = new Function('return (' + preludeSrc + ')')() as typeof parleyPrelude
    const preview = new Function('return (' + previewSrc + ')')() as typeof previewOf
    expect(preludeSrc).not.toMatch(/\brequire\(|\bimport\(|\b__name\b|\bprocess\b|\bBuffer\b|\bsetTimeout\b/)

    const mod = {
      actions: { shout: (_ctx: Json, s: string) => s.toUpperCase() },
      hooks: {
        beforeOutgoing: (ctx: Json) => void (ctx.event.type === 'text' && (ctx.event.payload.text += '.')),
        afterIncoming: (ctx: Json) => void (ctx.state.user.trigger = ctx.event.trigger?.flowId ?? null),
      },
      workflows: {
        ask: {
          trigger: { type: 'message', pattern: '^hi' },
          nodes: {
            a: {
              cards: [
                { type: 'action', action: 'shout', input: '{{ event.preview }}', output: 'loud' },
                { type: 'capture', variable: 'n', prompt: '{{ vars.loud }}? Number', validate: { type: 'number' } },
                { type: 'transition', conditions: [{ when: 'vars.n > 1', to: 'b' }], else: 'c' },
              ],
            },
            b: { cards: [{ type: 'say', payload: { type: 'markdown', markdown: '**{{ vars.n }}** is many' } }] },
            c: { cards: [{ type: 'say', text: 'few' }] },
          },
        },
      },
    }
    const t = setup(mod, {}, make, { previewOf: preview, methods: PASSED_THROUGH_METHODS })
    const first = await t.turn(messageEvent('hi there'))
    const second = await t.turn(messageEvent('5', first.state), { flow: first.flow })
    expect([...first.errors, ...second.errors]).toEqual([])
    expect(t.sent()).toEqual([
      { type: 'text', text: 'HI THERE? Number.' },
      { type: 'markdown', markdown: '**5** is many' },
    ])
    expect(second.state).toEqual({ user: { trigger: null }, conversation: {}, bot: {}, workflow: { loud: 'HI THERE', n: 5 } })
  })

  it('runs in a fresh realm that has only the JavaScript built-ins (like QuickJS)', async () => {
    const context = vm.createContext({})
    const make = vm.runInContext('(' + String(parleyPrelude) + ')', context) as typeof parleyPrelude
    const preview = vm.runInContext('(' + String(previewOf) + ')', context) as typeof previewOf
    const t = setup(
      { workflows: { w: { trigger: { type: 'conversationStarted' }, nodes: { a: { cards: [{ type: 'say', text: 'Hello {{ event.userId }} ({{ event.trigger.eventName }})' }] } } } } },
      {},
      make,
      { previewOf: preview, methods: PASSED_THROUGH_METHODS },
    )
    const out = await t.turn(messageEvent({ type: 'markdown', markdown: '# hi' }), { conversationStarted: true })
    expect(out.errors).toEqual([])
    expect(t.sent()).toEqual([{ type: 'text', text: 'Hello user-1 (conversationStarted)' }])
    expect(preview({ type: 'card', title: 'T', actions: [{ action: 'url', label: 'Open', value: 'https://x.test' }] })).toBe('T (Open)')
  })
})

// -------------------------------------------------------------------------------------------------------------------
describe('actionable errors', () => {
  it('a missing client method fails with its name and the methods the client has', async () => {
    const t = setup({ hooks: { afterIncoming: async (ctx: Json) => ctx.client.sendMesage({ payload: { type: 'text', text: 'x' } }) } })
    const out = await t.turn(messageEvent('hi'))
    expect(out.errors).toHaveLength(1)
    expect(out.errors[0]).toMatch(/^hooks\.afterIncoming: client\.sendMesage is not a method of the bot client \(it has: .*\bcreateMessage\b.*\)$/)
    // what the client has still works, and is not hidden behind the check
    const ok = setup({ hooks: { afterIncoming: async (ctx: Json) => void (ctx.state.bot.has = [typeof ctx.client.createMessage, typeof ctx.client.then, 'getUser' in ctx.client]) } })
    expect((await ok.turn(messageEvent('hi'))).state.bot).toEqual({ has: ['function', 'undefined', true] })
  })

  it('a unit stopped at its time budget names the budget and the setting (PARLEY_BOT_TIMEOUT_MS)', async () => {
    const t = setup({ hooks: { afterIncoming: () => new Promise(() => {}) } })
    const pending = t.turn(messageEvent('hi'), { budgetMs: 750 })
    await new Promise((r) => setTimeout(r, 20))
    expect(t.api.abortUnit()).toBe(true)
    const out = await pending
    expect(out.errors).toEqual(['hooks.afterIncoming: timed out: it ran longer than its 750 ms budget (each hook, card or action; set by PARLEY_BOT_TIMEOUT_MS, or the bot\'s maxExecutionTime in seconds)'])
  })
})
