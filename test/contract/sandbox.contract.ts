/**
 * The BotSandbox contract (src/runtime/sandbox.ts), for any implementation: check() loads code and
 * answers its export summary or its load error (with the line); run() runs the in-sandbox runtime's
 * `turn` and `beforeIncoming` entries against a host whose calls round-trip as JSON (rejections
 * surface inside the sandbox as errors the bot can catch) and which receives the bot's logs; time and
 * memory limits end runs with SandboxError kinds 'timeout' / 'memory' (or, for code that can be
 * stopped and caught inside, a recorded error) within the limit plus a margin; the sandbox stays
 * usable after failures; runs of different bots go on concurrently; a new version of a bot's code is
 * used after the version changes; close() ends everything.
 *
 * Usage: `describeSandboxContract('QuickJsSandbox', () => new QuickJsSandbox({ workers: 2 }))`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BeforeIncomingOutput, LogLevel, TurnOutput } from '../../src/runtime/prelude-contract.js'
import { SandboxError, type BotSandbox, type SandboxHost, type SandboxLimits, type SandboxRun } from '../../src/runtime/sandbox.js'

const MARGIN_MS = 1500
const LIMITS: SandboxLimits = { budgetMs: 400, timeoutMs: 1500, memoryBytes: 32 * 1024 * 1024 }

/** A fake host: answers host calls with `answer` (default: echo-like results) and records calls and logs. */
class FakeHost implements SandboxHost {
  readonly calls: Array<{ method: string; args: any }> = []
  readonly logs: Array<{ level: LogLevel; text: string }> = []

  constructor(private readonly answer: (method: string, args: any) => Promise<unknown> | unknown = defaultAnswer) {}

  async call(method: string, args: unknown): Promise<unknown> {
    // what crosses the boundary must be JSON
    expect(JSON.parse(JSON.stringify(args))).toEqual(args)
    this.calls.push({ method, args })
    return this.answer(method, args)
  }

  log(level: LogLevel, text: string): void {
    this.logs.push({ level, text })
  }

  sent(): any[] {
    return this.calls.filter((c) => c.method === 'createMessage').map((c) => c.args.payload)
  }

  texts(): string[] {
    return this.sent().map((p) => p.text)
  }
}

let messageIds = 0
function defaultAnswer(method: string, args: any): unknown {
  if (method === 'createMessage') {
    const id = `msg-${++messageIds}`
    return { message: { id, conversationId: args.conversationId, userId: 'bot-user', payload: args.payload, createdAt: new Date().toISOString(), tags: {} } }
  }
  if (method === 'getUser') return { user: { id: args.id, name: 'Ann ☃ "quoted"\nnew line 🎉', tags: {}, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' } }
  return {}
}

function event(text: string, overrides: Record<string, unknown> = {}) {
  return {
    botId: 'bot-1', conversationId: 'conv-1', createdOn: new Date().toISOString(), direction: 'incoming', id: `m-${text}`,
    integration: 'chat', messageId: `m-${text}`, payload: { type: 'text', text }, preview: text,
    state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'user-1',
    ...overrides,
  }
}

let versions = 0
/** A run request; a fresh version unless one is given (so each test loads its own code). */
function request(code: string, entry: SandboxRun['entry'], input: unknown, options: { botId?: string; version?: string; limits?: SandboxLimits } = {}): SandboxRun {
  const limits = options.limits ?? LIMITS
  return {
    botId: options.botId ?? 'bot-1',
    version: options.version ?? `v${++versions}`,
    code,
    entry,
    input: JSON.stringify(input),
    limits,
  }
}

const turnInput = (text: string, extra: Record<string, unknown> = {}) => ({ event: event(text), flow: null, conversationStarted: false, budgetMs: LIMITS.budgetMs, ...extra })

/** How a run ended: its output, or the SandboxError, and how long it took. */
async function outcome(promise: Promise<string>): Promise<{ ms: number; output?: TurnOutput; error?: SandboxError }> {
  const t = Date.now()
  try {
    const output = JSON.parse(await promise) as TurnOutput
    return { ms: Date.now() - t, output }
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxError)
    return { ms: Date.now() - t, error: err as SandboxError }
  }
}

/** Stopped at its memory limit: the run failed with SandboxError "memory", or the unit's out-of-memory error was recorded. */
function expectOutOfMemory(r: Awaited<ReturnType<typeof outcome>>): void {
  if (r.error) expect(r.error.kind).toBe('memory')
  else expect(r.output!.errors.join('\n')).toMatch(/out of memory/)
}

/**
 * Stopped at a time limit: the run failed with SandboxError "timeout", or the unit that overran was ended
 * and recorded as timed out while the rest of the turn went on (remaining hooks and cards still run).
 */
function expectTimedOut(r: Awaited<ReturnType<typeof outcome>>): void {
  if (r.error) expect(r.error.kind).toBe('timeout')
  else expect(r.output!.errors.join('\n')).toMatch(/timed out|interrupted/)
}

const hookBot = (body: string, extra = '') => String.raw`
${extra}
export const hooks = {
  async afterIncoming(ctx) {
    const { event, client, state, actions } = ctx
    ${body}
  },
}
`

export function describeSandboxContract(name: string, factory: () => BotSandbox | Promise<BotSandbox>): void {
  describe(`BotSandbox contract: ${name}`, () => {
    let sandbox: BotSandbox

    beforeAll(async () => {
      sandbox = await factory()
    })
    afterAll(async () => {
      await sandbox?.close()
    })

    // ------------------------------------------------------------ check()

    describe('check()', () => {
      it('valid code: its export summary (named exports, or the default export)', async () => {
        const named = await sandbox.check(String.raw`
          export const hooks = { afterIncoming() {}, beforeOutgoing() {} }
          export const actions = { lookup() {}, notify: async () => 1 }
          export const workflows = { greet: { trigger: { type: 'conversationStarted' }, nodes: { a: { cards: [{ type: 'say', text: 'hi' }] } } } }
        `)
        expect(named).toEqual({ ok: true, summary: { hooks: ['afterIncoming', 'beforeOutgoing'], actions: ['lookup', 'notify'], workflows: ['greet'] } })
        const byDefault = await sandbox.check('export default { hooks: { beforeIncoming() {} } }')
        expect(byDefault).toEqual({ ok: true, summary: { hooks: ['beforeIncoming'], actions: [], workflows: [] } })
        expect(await sandbox.check('')).toEqual({ ok: true, summary: { hooks: [], actions: [], workflows: [] } })
      })

      it('a syntax error: the error and its line', async () => {
        const result = await sandbox.check('export const hooks = {\n  afterIncoming() {\n    return )\n  },\n}\n')
        expect(result.ok).toBe(false)
        if (result.ok) return
        expect(result.error).toMatch(/SyntaxError/)
        expect(result.error).toMatch(/bot\.js:3\b/)
      })

      it('an error thrown at module top: the error and its line', async () => {
        const result = await sandbox.check('const a = 1\nconst b = 2\nthrow new RangeError("top-level failure")\n')
        expect(result.ok).toBe(false)
        if (result.ok) return
        expect(result.error).toMatch(/RangeError: top-level failure/)
        expect(result.error).toMatch(/bot\.js:3\b/)
      })

      it('exports of the wrong shape: the reason', async () => {
        const result = await sandbox.check("export const hooks = { afterIncomming() {} }")
        expect(result).toEqual({ ok: false, error: expect.stringMatching(/unknown hook "afterIncomming"/) })
        const flows = await sandbox.check("export const workflows = { w: { trigger: { type: 'nope' }, nodes: { a: {} } } }")
        expect(flows).toEqual({ ok: false, error: expect.stringMatching(/workflows\.w\.trigger\.type must be one of/) })
      })

      it('code that never finishes loading is refused within the budget', async () => {
        const t = Date.now()
        const result = await sandbox.check('for (;;) {}')
        expect(result.ok).toBe(false)
        expect(Date.now() - t).toBeLessThanOrEqual(5000 + MARGIN_MS) // check() uses the sandbox's own (default) budget
      })
    })

    // ------------------------------------------------------------ run(): entries and the host

    describe('run()', () => {
      it('turn: host calls round-trip as JSON (unicode, nesting), the output carries the state', async () => {
        const host = new FakeHost()
        const out = JSON.parse(await sandbox.run(request(hookBot(String.raw`
          const { user } = await client.getUser({ id: 'user-1' })
          state.user.greeted = true
          state.conversation.list = [1, { two: [3] }, 'quatre ✓']
          await client.createMessage({ payload: { type: 'text', text: 'hello ' + user.name }, metadata: { nested: { ok: true } } })
        `), 'turn', turnInput('hi')), host)) as TurnOutput
        expect(host.calls.map((c) => c.method)).toEqual(['getUser', 'createMessage'])
        expect(host.calls[0]!.args).toEqual({ id: 'user-1' })
        expect(host.calls[1]!.args).toEqual({
          conversationId: 'conv-1',
          payload: { type: 'text', text: 'hello Ann ☃ "quoted"\nnew line 🎉' },
          metadata: { nested: { ok: true } },
        })
        expect(out.errors).toEqual([])
        expect(out.state.user).toEqual({ greeted: true })
        expect(out.state.conversation).toEqual({ list: [1, { two: [3] }, 'quatre ✓'] })
        expect(out.flow).toBeNull()
      })

      it('turn: a host call that rejects surfaces as an Error the bot can catch', async () => {
        const host = new FakeHost(async (method, args) => {
          if (method === 'getMessage') throw Object.assign(new Error(`Message ${args.id} not found`), { type: 'ResourceNotFound' })
          return defaultAnswer(method, args)
        })
        const out = JSON.parse(await sandbox.run(request(hookBot(String.raw`
          try {
            await client.getMessage({ id: 'nope' })
            await client.createMessage({ payload: { type: 'text', text: 'not thrown' } })
          } catch (e) {
            await client.createMessage({ payload: { type: 'text', text: (e instanceof Error) + ' ' + e.message } })
          }
          await client.getMessage({ id: 'uncaught' })
        `), 'turn', turnInput('x')), host)) as TurnOutput
        expect(host.texts()).toEqual(['true ResourceNotFound: Message nope not found'])
        // the uncaught one is recorded by the runtime, and the run still ends normally
        expect(out.errors).toEqual([expect.stringMatching(/hooks\.afterIncoming: .*Message uncaught not found/)])
      })

      it('turn: console.* arrives at host.log with its level, in order', async () => {
        const host = new FakeHost()
        await sandbox.run(request(hookBot(String.raw`
          console.log('a log', 1, { k: [true] })
          console.info('an info')
          console.warn('a warning')
          console.error('an error', new TypeError('bad'))
          console.debug('a debug')
        `), 'turn', turnInput('x')), host)
        expect(host.logs).toEqual([
          { level: 'info', text: 'a log 1 {"k":[true]}' },
          { level: 'info', text: 'an info' },
          { level: 'warn', text: 'a warning' },
          { level: 'error', text: 'an error TypeError: bad' },
          { level: 'debug', text: 'a debug' },
        ])
      })

      it('turn: many host calls in a row, and concurrent ones from one run', async () => {
        let n = 0
        const host = new FakeHost(async (method, args) => (method === 'getUser' ? { user: { id: args.id, n: ++n } } : defaultAnswer(method, args)))
        const out = JSON.parse(await sandbox.run(request(hookBot(String.raw`
          let sum = 0
          for (let i = 0; i < 50; i++) sum += (await client.getUser({ id: 'u' + i })).user.n
          const all = await Promise.all([1, 2, 3, 4, 5].map((i) => client.getUser({ id: 'p' + i })))
          state.bot.sum = sum
          state.bot.parallel = all.map((r) => r.user.id)
        `), 'turn', turnInput('x')), host)) as TurnOutput
        expect(out.errors).toEqual([])
        expect(out.state.bot).toEqual({ sum: (50 * 51) / 2, parallel: ['p1', 'p2', 'p3', 'p4', 'p5'] })
        expect(host.calls).toHaveLength(55)
      })

      it('beforeIncoming: the changed payload, a stop, or the payload unchanged', async () => {
        const code = String.raw`
          export const hooks = {
            beforeIncoming({ event }) {
              if (event.payload.text === 'stop') return { stop: true }
              if (event.payload.text === 'throw') throw new Error('nope')
              event.payload.text = event.payload.text.toUpperCase()
            },
          }
        `
        const version = `v${++versions}`
        const run = async (text: string) =>
          JSON.parse(await sandbox.run(request(code, 'beforeIncoming', { event: event(text), budgetMs: LIMITS.budgetMs }, { version }), new FakeHost())) as BeforeIncomingOutput
        expect(await run('shout')).toEqual({ payload: { type: 'text', text: 'SHOUT' }, stop: false })
        expect(await run('stop')).toEqual({ payload: { type: 'text', text: 'stop' }, stop: true })
        expect(await run('throw')).toEqual({ payload: { type: 'text', text: 'throw' }, stop: false })
        const none = JSON.parse(await sandbox.run(request('export const hooks = {}', 'beforeIncoming', { event: event('same'), budgetMs: LIMITS.budgetMs }), new FakeHost())) as BeforeIncomingOutput
        expect(none).toEqual({ payload: { type: 'text', text: 'same' }, stop: false })
      })

      it('code that does not load fails the run with its error', async () => {
        const result = await outcome(sandbox.run(request('export const hooks = {', 'turn', turnInput('x')), new FakeHost()))
        expect(result.error?.kind).toBe('error')
        expect(result.error?.message).toMatch(/SyntaxError/)
      })
    })

    // ------------------------------------------------------------ limits

    describe('limits', () => {
      it('a hook over its time budget is stopped within the budget + margin (a timeout, or a recorded interruption)', async () => {
        const host = new FakeHost()
        const r = await outcome(sandbox.run(request(hookBot('for (;;) {}'), 'turn', turnInput('x')), host))
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
        if (r.error) expect(r.error.kind).toBe('timeout')
        else expect(r.output!.errors).toEqual([expect.stringMatching(/^hooks\.afterIncoming: timed out: it ran longer than its \d+ ms budget .*PARLEY_BOT_TIMEOUT_MS/)])
      })

      it('a unit waiting on a host call that never answers is stopped at its wall-time budget (timed out)', async () => {
        const host = new FakeHost((method, args) => (method === 'getUser' ? new Promise(() => {}) : defaultAnswer(method, args)))
        const r = await outcome(sandbox.run(request(hookBot("await client.getUser({ id: 'u' })"), 'turn', turnInput('x')), host))
        expectTimedOut(r)
        expect(r.ms).toBeGreaterThanOrEqual(LIMITS.budgetMs - 50)
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
      })

      it('a run whose units each stay within budget but together pass the run\'s time limit → SandboxError "timeout" at that limit', async () => {
        // 8 execute cards, each waiting 300 ms on its host (budget 400 ms): 2.4 s in all, over the 1.5 s run limit
        const cards = Array.from({ length: 8 }, () => "{ type: 'execute', code: 'await client.getUser({ id: \"u\" })' }").join(', ')
        const code = `export const workflows = { slow: { trigger: { type: 'message' }, nodes: { a: { cards: [${cards}] } } } }`
        const host = new FakeHost(async (method, args) => {
          if (method === 'getUser') await new Promise((r) => setTimeout(r, 300))
          return defaultAnswer(method, args)
        })
        const r = await outcome(sandbox.run(request(code, 'turn', turnInput('go')), host))
        expect(r.error?.kind).toBe('timeout')
        expect(r.ms).toBeGreaterThanOrEqual(LIMITS.timeoutMs - 50)
        expect(r.ms).toBeLessThanOrEqual(LIMITS.timeoutMs + MARGIN_MS)
        expect(host.calls.length).toBeLessThan(8)
      })

      it('a run awaiting a promise that never settles is stopped (timed out) within the budget + margin', async () => {
        const r = await outcome(sandbox.run(request(hookBot('await new Promise(() => {})'), 'turn', turnInput('x')), new FakeHost()))
        expectTimedOut(r)
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
      })

      // One native call (fill) that allocates: QuickJS fails it at the memory limit, unless the machine is so
      // loaded that the call is still running past its deadline, when the pool's watchdog stops it from outside
      // (reported as a time limit whose message names allocation).
      it('memory: code whose loading allocates past the memory limit → SandboxError "memory" (or the watchdog\'s stop)', async () => {
        const r = await outcome(sandbox.run(request('const big = new Array(1e9).fill(0)', 'turn', turnInput('x')), new FakeHost()))
        if (r.error?.kind !== 'memory') expect(r.error?.message).toMatch(/without yielding \(for example allocating/)
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
      })

      // QuickJS polls its interrupt handler by operation count: a loop of long native steps (filling
      // large arrays) is barely polled, so the pool stops its worker from outside (heartbeat).
      it('memory: an allocation loop at load (chunks of 1e5) → SandboxError "memory" (or "timeout") within the budget + margin', async () => {
        const r = await outcome(sandbox.run(request('const big = []; for (;;) big.push(new Array(1e5).fill(1))', 'turn', turnInput('x')), new FakeHost()))
        expect(r.error?.kind).toMatch(/^(memory|timeout)$/)
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
      })

      it('memory: a hook exceeding the limit is stopped (SandboxError "memory", or a recorded out-of-memory error)', async () => {
        for (const body of [
          'new Array(1e9).fill(0)', "let s = 'x'; for (;;) s += s", 'new ArrayBuffer(1e9)', 'const a = []; for (;;) a.push({ n: a.length })',
        ]) {
          const r = await outcome(sandbox.run(request(hookBot(body), 'turn', turnInput('x')), new FakeHost()))
          expect(r.ms, body).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
          if (r.error) expect(r.error.kind, body).toBe('memory')
          else expect(r.output!.errors, body).toEqual([expect.stringMatching(/memory|too long|interrupted|timed out/)])
        }
      })

      it('memory: a hook allocating in large chunks up to the limit is stopped within the budget + margin', async () => {
        const r = await outcome(sandbox.run(request(hookBot('const a = []; for (;;) a.push(new Array(1e5).fill(1))'), 'turn', turnInput('x')), new FakeHost()))
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
        if (r.error) expect(r.error.kind).toMatch(/^(memory|timeout)$/)
        else expect(r.output!.errors).toEqual([expect.stringMatching(/memory|interrupted|timed out/)])
      })

      it('a promise chain left running after the hook returned: the run ends normally, the chain is stopped and logged, the next run is clean', async () => {
        const code = hookBot(String.raw`
          if (event.payload.text === 'chain') Promise.resolve().then(function f() { state.bot.spins = (state.bot.spins || 0) + 1; return Promise.resolve().then(f) })
          await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
        `)
        const version = `v${++versions}`
        const host = new FakeHost()
        const r = await outcome(sandbox.run(request(code, 'turn', turnInput('chain'), { version }), host))
        expect(r.error).toBeUndefined()
        expect(r.ms).toBeLessThanOrEqual(LIMITS.budgetMs + MARGIN_MS)
        expect(host.texts()).toEqual(['ok chain'])
        expect(host.logs).toContainEqual({ level: 'error', text: expect.stringMatching(/promise chain left running/) })
        // the chain does not follow the bot into its next run (the VM it ran in was discarded)
        const next = new FakeHost()
        const t = Date.now()
        const out = JSON.parse(await sandbox.run(request(code, 'turn', turnInput('next'), { version }), next)) as TurnOutput
        expect(Date.now() - t).toBeLessThan(LIMITS.budgetMs)
        expect(out.errors).toEqual([])
        expect(out.state.bot).toEqual({})
        expect(next.texts()).toEqual(['ok next'])
        expect(next.logs).toEqual([])
      })

      it('code that catches its own interruption is still stopped at the run\'s time limit + margin', async () => {
        const r = await outcome(sandbox.run(request(hookBot('for (;;) { try { await (async () => { for (;;) {} })() } catch (e) {} }'), 'turn', turnInput('x')), new FakeHost()))
        expectTimedOut(r)
        expect(r.ms).toBeLessThanOrEqual(LIMITS.timeoutMs + MARGIN_MS)
      })

      it('the sandbox stays usable after each kind of failure, for the same bot and others', async () => {
        const failing = ['for (;;) {}', 'await new Promise(() => {})', 'new Array(1e9).fill(0)', 'const f = () => f(); f()', "throw new Error('plain')"]
        for (const body of failing) {
          const version = `v${++versions}`
          await outcome(sandbox.run(request(hookBot(`if (event.payload.text === 'bad') { ${body} }\nawait client.createMessage({ payload: { type: 'text', text: 'fine' } })`), 'turn', turnInput('bad'), { version }), new FakeHost()))
          const host = new FakeHost()
          const out = JSON.parse(await sandbox.run(request(hookBot(`if (event.payload.text === 'bad') { ${body} }\nawait client.createMessage({ payload: { type: 'text', text: 'fine' } })`), 'turn', turnInput('good'), { version }), host)) as TurnOutput
          expect(out.errors, body).toEqual([])
          expect(host.texts(), body).toEqual(['fine'])
          const other = new FakeHost()
          await sandbox.run(request(hookBot("await client.createMessage({ payload: { type: 'text', text: 'other' } })"), 'turn', turnInput('x'), { botId: 'bot-other' }), other)
          expect(other.texts()).toEqual(['other'])
        }
      })
    })

    // ------------------------------------------------------------ concurrency and versions

    describe('concurrency and versions', () => {
      it('runs of different bots go on concurrently, each with its own host, without cross-talk', async () => {
        const bots = Array.from({ length: 8 }, (_, i) => `bot-c${i}`)
        const hosts = bots.map(() => new FakeHost(async (method, args) => {
          if (method === 'getUser') await new Promise((r) => setTimeout(r, 50))
          return defaultAnswer(method, args)
        }))
        const t = Date.now()
        const outs = await Promise.all(bots.map((botId, i) => sandbox.run(request(hookBot(String.raw`
          await client.getUser({ id: 'u' })
          await client.createMessage({ payload: { type: 'text', text: 'I am ${botId}' } })
          state.bot.me = '${botId}'
        `), 'turn', turnInput('x'), { botId }), hosts[i]!)))
        expect(Date.now() - t).toBeLessThan(8 * 50 + 3000) // not one after the other with a per-run cost
        outs.forEach((o, i) => expect((JSON.parse(o) as TurnOutput).state.bot).toEqual({ me: bots[i] }))
        hosts.forEach((h, i) => expect(h.texts()).toEqual([`I am ${bots[i]}`]))
      })

      it('two runs of the same bot at once (one waiting on its host) both complete with their own state', async () => {
        const code = hookBot(String.raw`
          if (event.payload.text === 'slow') await client.getUser({ id: 'slow' })
          state.conversation.text = event.payload.text
          await client.createMessage({ payload: { type: 'text', text: 'done ' + event.payload.text } })
        `)
        const version = `v${++versions}`
        const slowHost = new FakeHost(async (method, args) => {
          if (method === 'getUser') await new Promise((r) => setTimeout(r, 250))
          return defaultAnswer(method, args)
        })
        const fastHost = new FakeHost()
        const [slow, fast] = await Promise.all([
          sandbox.run(request(code, 'turn', turnInput('slow'), { version }), slowHost),
          sandbox.run(request(code, 'turn', turnInput('fast'), { version }), fastHost),
        ])
        expect((JSON.parse(slow) as TurnOutput).state.conversation).toEqual({ text: 'slow' })
        expect((JSON.parse(fast) as TurnOutput).state.conversation).toEqual({ text: 'fast' })
        expect(slowHost.texts()).toEqual(['done slow'])
        expect(fastHost.texts()).toEqual(['done fast'])
      })

      const RUNAWAYS: Record<string, string> = {
        'a loop catching its own interruption': 'for (;;) { try { await (async () => { for (;;) {} })() } catch (e) {} }',
        // stopped at its memory limit (out of memory), the others at their time limit
        'an allocation loop up to the memory limit': 'const a = []; for (;;) a.push(new Array(1e5).fill(1))',
        'a loop catching out-of-memory errors': 'const keep = []; for (;;) { try { keep.push(new Array(1e5).fill(1)) } catch (e) {} }',
        'a promise chain left running': 'Promise.resolve().then(function f() { return Promise.resolve().then(f) })\nawait new Promise(() => {})',
      }
      for (const [what, runawayBody] of Object.entries(RUNAWAYS)) it(`a runaway run (${what}) does not take runs of other bots down with it`, async () => {
        // warm up with overlapping runs, so that the sandbox has started whatever it runs concurrent runs on
        const warm = (k: string) => sandbox.run(request(hookBot(`await client.getUser({ id: '${k}' })`), 'turn', turnInput('x'), { botId: `bot-warm-${k}` }), new FakeHost(async () => {
          await new Promise((r) => setTimeout(r, 150))
          return {}
        }))
        const warming: Array<Promise<string>> = []
        for (const k of ['1', '2', '3', '4']) {
          warming.push(warm(k))
          await new Promise((r) => setTimeout(r, 50))
        }
        await Promise.all(warming)
        const runaway = outcome(sandbox.run(request(hookBot(runawayBody), 'turn', turnInput('x'), { botId: 'bot-runaway' }), new FakeHost()))
        await new Promise((r) => setTimeout(r, 300))
        // bystanders arrive one after the other while earlier ones are still busy with their host
        // (each host call takes 200 ms: well inside the 400 ms budget)
        const slowHost = () => new FakeHost(async (method, args) => {
          if (method === 'getUser') await new Promise((r) => setTimeout(r, 200))
          return defaultAnswer(method, args)
        })
        const bystanders: Array<Promise<{ k: string; r: Awaited<ReturnType<typeof outcome>>; texts: string[] }>> = []
        for (const k of ['a', 'b', 'c']) {
          const host = slowHost()
          bystanders.push(outcome(sandbox.run(request(hookBot(`await client.getUser({ id: 'u' })\nawait client.createMessage({ payload: { type: 'text', text: '${k}' } })`), 'turn', turnInput('x'), { botId: `bot-bystander-${k}` }), host))
            .then((r) => ({ k, r, texts: host.texts() })))
          await new Promise((r) => setTimeout(r, 100))
        }
        const others = await Promise.all(bystanders)
        const ran = await runaway
        if (/memory limit/.test(what)) expectOutOfMemory(ran)
        else expectTimedOut(ran)
        for (const { k, r, texts } of others) {
          expect(r.error, `bystander ${k}: ${r.error?.message}`).toBeUndefined()
          // A bystander moved off the runaway's worker starts again from the beginning and repeats its host calls
          // (by design: the bot runtime's replies have deterministic ids, so a user never gets one twice).
          expect(new Set(texts), `bystander ${k}: ${JSON.stringify(texts)}`).toEqual(new Set([k]))
        }
      })

      it('a new version of a bot\'s code is used as soon as the version changes', async () => {
        const say = (word: string) => hookBot(`await client.createMessage({ payload: { type: 'text', text: '${word}' } })`)
        const run = async (code: string, version: string) => {
          const host = new FakeHost()
          await sandbox.run(request(code, 'turn', turnInput('x'), { botId: 'bot-versioned', version }), host)
          return host.texts()
        }
        expect(await run(say('one'), 'version-1')).toEqual(['one'])
        expect(await run(say('one'), 'version-1')).toEqual(['one'])
        expect(await run(say('two'), 'version-2')).toEqual(['two'])
        expect(await run(say('two'), 'version-2')).toEqual(['two'])
        expect(await run(say('three'), 'version-3')).toEqual(['three'])
      })
    })

    // ------------------------------------------------------------ close()

    describe('close()', () => {
      const settlesWithin = async (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))])
      const hangingHost = () => new FakeHost((method, args) => (method === 'getUser' ? new Promise(() => {}) : defaultAnswer(method, args)))
      const longLimits = { ...LIMITS, timeoutMs: 20_000 }

      it('ends a run in flight with a SandboxError, and refuses new work', async () => {
        const own = await factory()
        expect(await own.check('export const hooks = {}')).toMatchObject({ ok: true }) // the sandbox is up
        const inFlight = outcome(own.run(request(hookBot("await client.getUser({ id: 'u' })"), 'turn', turnInput('x'), { limits: longLimits }), hangingHost()))
        await new Promise((r) => setTimeout(r, 300))
        await own.close()
        expect(await settlesWithin(inFlight, 3000)).toBe(true)
        expect((await inFlight).error).toBeInstanceOf(SandboxError)
        await expect(own.run(request(hookBot(''), 'turn', turnInput('x')), new FakeHost())).rejects.toBeInstanceOf(SandboxError)
        await expect(own.check('export const hooks = {}')).rejects.toBeInstanceOf(SandboxError)
      })

      it('ends a run that was still waiting for its sandbox to start', async () => {
        const own = await factory()
        const inFlight = outcome(own.run(request(hookBot("await client.getUser({ id: 'u' })"), 'turn', turnInput('x'), { limits: longLimits }), hangingHost()))
        await own.close()
        expect(await settlesWithin(inFlight, 3000), 'the run settled after close()').toBe(true)
      })
    })
  })
}
