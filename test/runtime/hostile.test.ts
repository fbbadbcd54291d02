/**
 * Hostile bot code (threats T3, R8), with small limits (500 ms per hook, 2 s per turn, 32 MB),
 * while ANOTHER bot is being talked to the whole time and must keep answering. For each attack:
 * the turn is stopped within its limit + 1.5 s, the failure is in the bot's logs (getBotLogs), the
 * conversation keeps working, GET /healthz keeps answering, and the other bot's replies all
 * arrive within a few seconds. Escape attempts report what they got: never `process`, `require`,
 * a module loader or the host functions; the client is limited to the bot's own data.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { allLogs, createBot, jsonAfter, sleep, STREAM_CONFIG, Talk, textOf, uid, WAIT_MS, type TestBot } from './helpers.js'

const LIMITS = { budgetMs: 500, timeoutMs: 2000, memoryBytes: 32 * 1024 * 1024 }
const MARGIN_MS = 1500
/** The other bot's replies must each come within this, and none may be lost. */
const OTHER_BOT_LATENCY_MS = 3000

// ---------------------------------------------------------------- the other bot, talked to all along

interface Ping { text: string; sentAt: number; latency?: number }

/** Sends a message to an echo bot every ~100 ms and records how long each reply takes. */
class Pinger {
  readonly pings: Ping[] = []
  private running = true
  private loop: Promise<void> | undefined

  constructor(private readonly talk: Talk) {}

  start(): void {
    this.loop = (async () => {
      let i = 0
      while (this.running) {
        const text = `ping ${i++}`
        const ping: Ping = { text, sentAt: Date.now() }
        this.pings.push(ping)
        const before = this.talk.botMessages().length
        try {
          await this.talk.say(text)
          await this.talk.until(() => this.talk.botMessages().slice(before).some((m) => textOf(m) === `pong ${text}`), `pong ${text}`, 15_000)
          ping.latency = Date.now() - ping.sentAt
        } catch {
          // lost (or the listener failed): recorded as no latency
        }
        await sleep(100)
      }
    })()
  }

  /** The pings sent since `from` (waiting for at least one), once each has been answered or given up on. */
  async since(from: number): Promise<Ping[]> {
    const deadline = Date.now() + 20_000
    const done = () => {
      const sent = this.pings.filter((p) => p.sentAt >= from)
      return sent.length > 0 && sent.every((p) => p.latency !== undefined || Date.now() - p.sentAt > 15_000)
    }
    while (!done() && Date.now() < deadline) await sleep(50)
    return this.pings.filter((p) => p.sentAt >= from)
  }

  async stop(): Promise<void> {
    this.running = false
    await this.loop
  }
}

// ---------------------------------------------------------------- the attacks

interface Attack {
  name: string
  /** Statements run by afterIncoming for the message "attack" (inside an async function with ctx destructured). */
  body: string
  /** Which limit must stop it: the per-hook budget or the per-turn timeout. */
  limit: 'budget' | 'timeout'
  /** The hook itself goes on (the attack runs in the background): its own reply is sent. */
  continues?: boolean
  /** What the bot's error log must say (default: any error line). */
  logged?: RegExp
}

const ATTACKS: Attack[] = [
  { name: 'while(true){} in a hook', body: 'while (true) {}', limit: 'budget' },
  { name: 'a microtask loop (for(;;) await null)', body: 'for (;;) await null', limit: 'budget' },
  {
    name: 'an endless promise chain left running',
    body: 'Promise.resolve().then(function f() { return Promise.resolve().then(f) })',
    limit: 'budget',
    continues: true,
    logged: /promise chain left running/,
  },
  { name: 'an endless promise chain awaited forever', body: 'await new Promise(() => { Promise.resolve().then(function f() { return Promise.resolve().then(f) }) })', limit: 'budget' },
  { name: 'a 1 GB array (new Array(1e9).fill(0))', body: 'new Array(1e9).fill(0)', limit: 'budget' },
  { name: 'string doubling', body: "let s = 'x'; for (;;) s += s", limit: 'budget' },
  { name: 'a 1 GB ArrayBuffer', body: 'new Uint8Array(new ArrayBuffer(1e9)).fill(1)', limit: 'budget' },
  { name: 'an array-push bomb', body: 'const a = []; for (;;) a.push({ x: a.length })', limit: 'budget' },
  // stopped by the worker's heap cap (out of memory), or from outside at its time limit
  { name: 'an allocation loop in large chunks (arrays of 1e5)', body: 'const a = []; for (;;) a.push(new Array(1e5).fill(1))', limit: 'budget', logged: /out of memory|timed out/ },
  { name: 'deep recursion', body: 'const f = (n) => f(n + 1) + 1; f(0)', limit: 'budget' },
  { name: 'ReDoS (/^(a+)+$/)', body: "/^(a+)+$/.test('a'.repeat(40) + 'b')", limit: 'budget' },
  // waits are wall time too: the unit's budget ends them (docs: "each hook… has a wall-time budget")
  { name: 'an awaited never-resolving promise', body: 'await new Promise(() => {})', limit: 'budget' },
  { name: 'a never-resolving promise in an action', body: 'await actions.hang()', limit: 'budget' },
  { name: 'an endless loop in an action', body: 'await actions.spin()', limit: 'budget' },
  { name: 'an endless loop in an outgoing hook', body: "await client.createMessage({ payload: { type: 'text', text: 'spin-outgoing' } })", limit: 'budget' },
  {
    name: 'a loop that catches its own interruption across an async boundary',
    body: 'for (;;) { try { await (async () => { for (;;) {} })() } catch (e) {} }',
    limit: 'budget',
  },
  {
    name: 'a loop that catches out-of-memory errors',
    body: 'const keep = []; for (;;) { try { keep.push(new Array(1e5).fill(1)) } catch (e) {} }',
    limit: 'timeout',
    logged: /timed out/,
  },
  {
    name: 're-entering the runtime (globalThis.__parley) to reset the budget',
    body: "for (;;) await globalThis.__parley.beforeIncoming(JSON.stringify({ event: { ...event, state: {}, payload: { type: 'text', text: 'burn' } }, budgetMs: 500 }))",
    // the runtime's entry points are not reachable from bot code (issue #13): the attempt is an error of the hook
    limit: 'budget',
  },
]

function attackBot(body: string): string {
  return String.raw`
export const actions = {
  async hang() { await new Promise(() => {}) },
  async spin() { for (;;) {} },
}
export const hooks = {
  beforeIncoming({ event }) {
    if (event.type === 'text' && event.payload.text === 'burn') { const t = Date.now(); while (Date.now() - t < 300) {} }
  },
  beforeOutgoing({ event }) {
    if (event.payload.text === 'spin-outgoing') for (;;) {}
  },
  async afterIncoming({ event, client, actions, state }) {
    if (event.type !== 'text') return
    if (event.payload.text === 'attack') {
      ${body}
    }
    await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
  },
}
`
}

describe('runtime: hostile bot code is contained', () => {
  let h: Harness
  let pinger: Pinger
  let goodTalk: Talk

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, sandboxLimits: LIMITS } })
    const good = await createBot(h, String.raw`
      export const hooks = {
        async afterIncoming({ event, client }) {
          if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: 'pong ' + event.payload.text } })
        },
      }
    `)
    goodTalk = await Talk.open(good)
    pinger = new Pinger(goodTalk)
    pinger.start()
    await goodTalk.botCount(1, 10_000)
  }, 60_000)

  afterAll(async () => {
    await pinger?.stop()
    await goodTalk?.close()
    await h?.close()
  })

  /** GET /healthz every 100 ms until `done` resolves; returns the slowest answer (ms) and any failure. */
  async function healthDuring<T>(work: Promise<T>): Promise<{ result: T; slowest: number; failures: string[] }> {
    let finished = false
    const failures: string[] = []
    let slowest = 0
    const poll = (async () => {
      while (!finished) {
        const t = Date.now()
        try {
          const res = await fetch(`${h.baseUrl}/healthz`)
          if (res.status !== 200) failures.push(`status ${res.status}`)
          await res.text()
        } catch (err) {
          failures.push(String(err))
        }
        slowest = Math.max(slowest, Date.now() - t)
        await sleep(100)
      }
    })()
    try {
      const result = await work
      return { result, slowest, failures }
    } finally {
      finished = true
      await poll
    }
  }

  async function expectOtherBotFine(from: number): Promise<void> {
    const pings = await pinger.since(from)
    expect(pings.length).toBeGreaterThan(0)
    const lost = pings.filter((p) => p.latency === undefined).map((p) => p.text)
    expect(lost, 'the other bot\'s messages left unanswered').toEqual([])
    const slowest = Math.max(...pings.map((p) => p.latency!))
    expect(slowest, 'the other bot\'s slowest reply (ms)').toBeLessThanOrEqual(OTHER_BOT_LATENCY_MS)
  }

  /** Error lines of the bot's logs in a conversation, written at or after `from`. */
  async function failuresLogged(bot: TestBot, conversationId: string, from: number, timeoutMs = WAIT_MS): Promise<string[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const { logs } = await allLogs(h, bot.id)
      const errors = logs.filter((l) => l.level === 'error' && l.conversationId === conversationId && Date.parse(l.timestamp) >= from - 5).map((l) => l.message)
      if (errors.length > 0 || Date.now() > deadline) return errors
      await sleep(100)
    }
  }

  for (const attack of ATTACKS) {
    it(`${attack.name}: stopped within its ${attack.limit} + ${MARGIN_MS} ms, logged; the conversation, the server and the other bot go on`, async () => {
      const bot = await createBot(h, attackBot(attack.body))
      const talk = await Talk.open(bot)
      try {
        expect(await talk.askText('warm up')).toEqual(['ok warm up'])
        const t0 = Date.now()
        const { result: stoppedAfter, slowest, failures } = await healthDuring((async () => {
          await talk.say('attack')
          await talk.say('after')
          await talk.until(() => talk.botTexts().includes('ok after'), 'the reply to the message after the attack', 20_000)
          return Date.now() - t0
        })())
        const limit = attack.limit === 'budget' ? LIMITS.budgetMs : LIMITS.timeoutMs
        // soft: when this fails, the checks below still tell whether the rest held
        expect.soft(stoppedAfter, `the attack ran for ${stoppedAfter} ms`).toBeLessThanOrEqual(limit + MARGIN_MS)
        expect(failures).toEqual([])
        expect(slowest, 'slowest GET /healthz during the attack (ms)').toBeLessThan(1000)
        // the attack's turn sent nothing (unless the hook went on); the next message was answered once
        expect(talk.botTexts().filter((t) => t === 'ok attack')).toHaveLength(attack.continues ? 1 : 0)
        expect(talk.botTexts().filter((t) => t === 'ok after')).toHaveLength(1)
        // recorded in the bot's logs
        const logged = await failuresLogged(bot, talk.conversationId, t0)
        expect(logged.length).toBeGreaterThan(0)
        if (attack.logged) expect(logged.join('\n')).toMatch(attack.logged)
        // and the bot keeps working
        expect(await talk.askText('later')).toEqual(['ok later'])
        await expectOtherBotFine(t0)
      } finally {
        await talk.close()
      }
    })
  }

  it('a hook that awaits forever is stopped at its own wall-time budget (docs: "each hook… has a wall-time budget")', async () => {
    const bot = await createBot(h, attackBot('await new Promise(() => {})'))
    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('warm up')).toEqual(['ok warm up'])
      const t0 = Date.now()
      await talk.say('attack')
      await talk.say('after')
      await talk.until(() => talk.botTexts().includes('ok after'), 'the reply after the attack', 20_000)
      const took = Date.now() - t0
      expect(took, `the hook held the conversation for ${took} ms (budget ${LIMITS.budgetMs} ms, turn timeout ${LIMITS.timeoutMs} ms)`).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
    } finally {
      await talk.close()
    }
  })

  it('hostile beforeIncoming (endless loop, never-resolving promise): the user\'s POST returns within the limit, the message is stored as sent', async () => {
    const bot = await createBot(h, String.raw`
      export const hooks = {
        async beforeIncoming({ event }) {
          if (event.payload.text === 'loop') for (;;) {}
          if (event.payload.text === 'hang') await new Promise(() => {})
          event.payload.text = 'changed ' + event.payload.text
        },
        async afterIncoming({ event, client }) {
          await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
        },
      }
    `)
    const talk = await Talk.open(bot)
    try {
      const t0 = Date.now()
      for (const [text, limit] of [['loop', LIMITS.budgetMs], ['hang', LIMITS.timeoutMs]] as const) {
        const started = Date.now()
        const message = await talk.say(text)
        expect(Date.now() - started, `POST with a "${text}" beforeIncoming (ms)`).toBeLessThanOrEqual(limit + MARGIN_MS)
        expect(message.payload).toEqual({ type: 'text', text })
        expect((await talk.user.getMessage({ id: message.id })).message.payload).toEqual({ type: 'text', text })
      }
      await talk.until(() => talk.botTexts().includes('ok hang'), 'the replies to the two messages')
      expect(talk.botTexts()).toEqual(['ok loop', 'ok hang'])
      expect(await talk.askText('fine')).toEqual(['ok changed fine'])
      expect((await failuresLogged(bot, talk.conversationId, t0)).length).toBeGreaterThanOrEqual(2)
      await expectOtherBotFine(t0)
    } finally {
      await talk.close()
    }
  })

  it('a hostile module top level is refused at deploy within the limit; the server goes on', async () => {
    const bot = await createBot(h)
    for (const code of ['for (;;) {}', 'const a = []; for (;;) a.push(new Array(1e4).fill(1))', 'const f = () => f(); f()']) {
      const t = Date.now()
      const res = await fetch(`${h.baseUrl}/v1/admin/bots/${bot.id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId, 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
      })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { type: string }).type).toBe('InvalidPayload')
      expect(Date.now() - t).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
    }
    expect((await fetch(`${h.baseUrl}/healthz`)).status).toBe(200)
  })

  // ---------------------------------------------------------------- escapes

  /** Each probe is an expression; the bot reports `typeof` of its (awaited) value, or the error. */
  const PROBES: Record<string, string> = {
    'event.constructor.constructor("return process")()': 'event.constructor.constructor("return process")()',
    'event.constructor.constructor("return this")().process': 'event.constructor.constructor("return this")().process',
    'this.constructor.constructor("return globalThis.process")()': 'this.constructor.constructor("return globalThis.process")()',
    'client.createMessage.constructor("return process")()': 'client.createMessage.constructor("return process")()',
    'client.getUser.constructor.constructor("return this")().process': 'client.getUser.constructor.constructor("return this")().process',
    'actions.noop.constructor("return process")()': 'actions.noop.constructor("return process")()',
    'console.log.constructor("return process")()': 'console.log.constructor("return process")()',
    '(function(){ return this })()': '(function () { return this })()',
    'Function("return this")().process': 'Function("return this")().process',
    'Function("return this")().require': 'Function("return this")().require',
    'eval("process")': 'eval("process")',
    'new Function("return require")()': 'new Function("return require")()',
    'require': 'require',
    'require("fs")': 'require("fs")',
    'module / exports / __dirname': '(typeof module === "undefined" && typeof exports === "undefined" && typeof __dirname === "undefined") ? undefined : "leak"',
    'import("fs")': 'import("fs")',
    'import("node:child_process")': 'import("node:child_process")',
    'import("std") (QuickJS std module)': 'import("std")',
    'import("os") (QuickJS os module)': 'import("os")',
    'globalThis.std / globalThis.os / scriptArgs': 'globalThis.std || globalThis.os || globalThis.scriptArgs',
    'globalThis.process': 'globalThis.process',
    'globalThis.Buffer': 'globalThis.Buffer',
    'globalThis.fetch': 'globalThis.fetch',
    'globalThis.XMLHttpRequest': 'globalThis.XMLHttpRequest',
    'globalThis.WebAssembly': 'globalThis.WebAssembly',
    'globalThis.setTimeout': 'globalThis.setTimeout',
    'globalThis.__host_call': 'globalThis.__host_call',
    'globalThis.__host_budget': 'globalThis.__host_budget',
    'globalThis.__host_log': 'globalThis.__host_log',
    '__host_call("getUser", "{}")': '__host_call("getUser", "{}")',
    'globalThis.__parley (the runtime\'s entry points)': 'globalThis.__parley',
    'globalThis.__parley = {} (overwrite)': '(globalThis.__parley = { turn() {} }, undefined)',
    'globalThis.__parley.turn = …': '(globalThis.__parley.turn = () => "hijacked", undefined)',
    'Object.defineProperty(globalThis.__parley, "turn", …)': '(Object.defineProperty(globalThis.__parley, "turn", { value: () => "hijacked" }), undefined)',
    // QuickJS lets this redefinition through (see the report); the worker keeps its own handle on the runtime,
    // so the next turns below must still run normally.
    'Object.defineProperty(globalThis, "__parley", …)': '(Object.defineProperty(globalThis, "__parley", { value: Object.freeze({ turn: async () => "{}", beforeIncoming: async () => "{}" }) }), undefined)',
    'sloppy arguments.callee.caller chain': 'Function("return (function probe() { return probe.caller && probe.caller.caller })()")()',
    'Error.prepareStackTrace (V8 CallSite trick)': '(Error.prepareStackTrace = (_, s) => s, new Error().stack.map ? "callsites" : undefined)',
    'Symbol.for("nodejs.util.inspect.custom")': 'globalThis[Symbol.for("nodejs.util.inspect.custom")]',
    'a Proxy as the createMessage argument': 'client.createMessage(new Proxy({}, { get: (t, k) => k === "payload" ? { type: "text", text: "via proxy" } : undefined })).then(() => undefined)',
  }

  it(`${Object.keys(PROBES).length} escape attempts: none yields process, require, a module, host functions or a hijacked runtime`, async () => {
    const probes = Object.entries(PROBES)
      .map(([name, expr]) => `    await probe(${JSON.stringify(name)}, () => ${expr})`)
      .join('\n')
    const bot = await createBot(h, String.raw`
export const actions = { noop() {} }
export const hooks = {
  async afterIncoming(ctx) {
    const { event, client, actions } = ctx
    if (event.payload.text !== 'probe') {
      await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
      return
    }
    const results = {}
    const probe = async (name, f) => {
      try {
        let v = f()
        if (v && typeof v.then === 'function') v = await v
        results[name] = typeof v === 'string' ? 'string:' + v : typeof v
      } catch (e) {
        results[name] = 'error: ' + (e && e.message)
      }
    }
${probes}
    results.globals = Object.getOwnPropertyNames(globalThis).sort().join(',')
    await client.createMessage({ payload: { type: 'text', text: 'RESULTS ' + JSON.stringify(results) } })
  },
}
`)
    const talk = await Talk.open(bot)
    try {
      const t0 = Date.now()
      const replies = await talk.askText('probe', 1, 10_000)
      const lastReply = replies.find((t) => t.startsWith('RESULTS ')) ?? (await talk.botCount(2)).map(textOf).find((t) => t.startsWith('RESULTS '))!
      const results = jsonAfter<Record<string, string>>(lastReply, 'RESULTS ')
      const { globals, ...probed } = results
      for (const [name, got] of Object.entries(probed)) {
        expect(got === 'undefined' || got.startsWith('error: ') || got === 'string:callsites', `${name} → ${got}`).toBe(true)
      }
      expect(Object.keys(probed).sort()).toEqual(Object.keys(PROBES).sort())
      for (const name of ['process', 'require', 'module', 'Buffer', 'fetch', 'std', 'os', 'WebAssembly', '__host_call', '__host_budget', '__host_log', 'setTimeout']) {
        expect(globals!.split(',')).not.toContain(name)
      }
      // after all that (including attempts on __parley), the bot still runs normally, in the same sandbox and in new ones
      expect(await talk.askText('still there?')).toEqual(['ok still there?'])
      expect(await talk.askText('and again')).toEqual(['ok and again'])
      await expectOtherBotFine(t0)
    } finally {
      await talk.close()
    }
  })

  it('the client is limited to the bot\'s own data: other bots\' and other integrations\' conversations, messages and users are refused', async () => {
    // a victim bot with a conversation, a message and a user; and another integration (the harness's second bot)
    const victim = await createBot(h)
    const victimTalk = await Talk.open(victim, { conversationId: uid('victim-conv') })
    const victimMessage = await victimTalk.say('secret of the victim')
    // the victim also has a conversation whose id the attacker uses for its own conversation
    const victimShared = await Talk.open(victim, { conversationId: 'shared-conversation' })
    const other = await h.createChatIntegration()
    const otherUser = await chat.Client.connect({ apiUrl: other.url })
    const { conversation: otherConversation } = await otherUser.createConversation({ id: uid('other-conv') })

    const targets = {
      victimConversation: victimTalk.conversationId,
      otherConversation: otherConversation.id,
      victimMessage: victimMessage.id,
      victimUser: victimTalk.user.user.id,
      otherUser: otherUser.user.id,
    }
    // The targets are part of the attacker's code (as ids leaked to a bot author would be).
    const attacker = await createBot(h, String.raw`
const t = ${JSON.stringify(targets)}
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.payload.text !== 'go') return
    const r = {}
    const attempt = async (name, f) => {
      try { const v = await f(); r[name] = 'ALLOWED ' + JSON.stringify(v).slice(0, 200) } catch (e) { r[name] = 'error: ' + e.message }
    }
    await attempt('createMessage(victim conversation)', () => client.createMessage({ conversationId: t.victimConversation, payload: { type: 'text', text: 'injected' } }))
    r['createMessage(shared id)'] = await client.createMessage({ conversationId: 'shared-conversation', payload: { type: 'text', text: 'to my own shared-conversation' } })
      .then((x) => x.message.conversationId === event.conversationId ? 'own conversation' : 'ELSEWHERE', (e) => 'error: ' + e.message)
    await attempt('createMessage(other integration conversation)', () => client.createMessage({ conversationId: t.otherConversation, payload: { type: 'text', text: 'injected' } }))
    await attempt('createEvent(victim conversation)', () => client.createEvent({ conversationId: t.victimConversation, payload: { injected: true } }))
    await attempt('getConversation(victim)', () => client.getConversation({ id: t.victimConversation }))
    await attempt('getConversation(other integration)', () => client.getConversation({ id: t.otherConversation }))
    await attempt('listMessages(victim conversation)', () => client.listMessages({ conversationId: t.victimConversation }))
    await attempt('getMessage(victim message)', () => client.getMessage({ id: t.victimMessage }))
    await attempt('getUser(victim user)', () => client.getUser({ id: t.victimUser }))
    await attempt('getUser(other integration user)', () => client.getUser({ id: t.otherUser }))
    await client.createMessage({ payload: { type: 'text', text: 'ATTEMPTS ' + JSON.stringify(r) } })
  },
}
`)
    const attackerTalk = await Talk.open(attacker, { conversationId: 'shared-conversation' })
    try {
      const t0 = Date.now()
      const replies = await attackerTalk.askText('go', 2, 10_000)
      expect(replies[0]).toBe('to my own shared-conversation')
      const attempts = jsonAfter<Record<string, string>>(replies[1]!, 'ATTEMPTS ')
      const { 'createMessage(shared id)': shared, ...refused } = attempts
      expect(Object.keys(refused)).toHaveLength(9)
      for (const [name, got] of Object.entries(refused)) expect(got, `${name} → ${got}`).toMatch(/^error: .*(NotFound|not found)/i)
      // the same conversation id in another integration: the bot reaches its own conversation only
      expect(shared).toBe('own conversation')
      // nothing reached the victim's or the other integration's conversations
      await sleep(300)
      expect(victimTalk.messages.map(textOf)).toEqual(['secret of the victim'])
      expect(victimTalk.events).toEqual([])
      const { messages: victimStored } = await victimTalk.user.listMessages({ conversationId: victimTalk.conversationId })
      expect(victimStored.map(textOf)).toEqual(['secret of the victim'])
      expect(victimShared.messages).toEqual([])
      expect((await victimShared.user.listMessages({ conversationId: 'shared-conversation' })).messages).toEqual([])
      const { messages: otherStored } = await otherUser.listMessages({ conversationId: otherConversation.id })
      expect(otherStored).toEqual([])
      // what the attacker wrote "to shared-conversation" landed in its own conversation of that id
      const { messages: own } = await attackerTalk.user.listMessages({ conversationId: attackerTalk.conversationId })
      expect(own.every((m) => m.conversationId === attackerTalk.conversationId)).toBe(true)
      await expectOtherBotFine(t0)
    } finally {
      await attackerTalk.close()
      await victimTalk.close()
      await victimShared.close()
    }
  })
})
