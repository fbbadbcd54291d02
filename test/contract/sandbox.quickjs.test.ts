import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { MetricsRegistry } from '../../src/lib/metrics.js'
import { QuickJsSandbox, type WorkerOptions } from '../../src/runtime/quickjs-sandbox.js'
import { SandboxError, type SandboxHost } from '../../src/runtime/sandbox.js'
import { describeSandboxContract } from './sandbox.contract.js'

// Two workers: the pool size of this 2-core machine (the app's default is min(4, cores)).
describeSandboxContract('QuickJsSandbox', () => new QuickJsSandbox({ workers: 2 }))

describe('QuickJsSandbox: a worker held by a runaway call', () => {
  // A turn limit far above the budget: the runaway must be stopped by the budget, whatever the load.
  const limits = { budgetMs: 400, timeoutMs: 20_000, memoryBytes: 32 * 1024 * 1024 }
  const input = (text: string) => JSON.stringify({
    event: {
      botId: 'b', conversationId: 'c', createdOn: new Date().toISOString(), direction: 'incoming', id: `m-${text}`, integration: 'chat', messageId: `m-${text}`,
      payload: { type: 'text', text }, preview: text, state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'u',
    },
    flow: null, conversationStarted: false, budgetMs: limits.budgetMs,
  })
  const hook = (body: string) => `export const hooks = { async afterIncoming({ event, client }) { ${body} } }`

  it('one worker: a bystander already in flight there is moved to a fresh worker and completes once; the runaway fails with a timeout at its budget, long before the turn limit', async () => {
    const sandbox = new QuickJsSandbox({ workers: 1 })
    try {
      const calls: string[] = []
      const logs: string[] = []
      let restarts = 0
      const host: SandboxHost = {
        restarted() {
          restarts++
        },
        async call(method, args) {
          calls.push(method)
          if (method === 'getUser') await new Promise((r) => setTimeout(r, 300))
          return method === 'createMessage' ? { message: { id: 'x', payload: (args as { payload: unknown }).payload } } : { user: { id: 'u' } }
        },
        log(level, text) {
          logs.push(`${level}: ${text}`)
        },
      }
      const bystander = sandbox.run({
        botId: 'bystander', version: '1', code: hook("await client.getUser({ id: 'u' }); await client.createMessage({ payload: { type: 'text', text: 'done' } })"), entry: 'turn', input: input('x'), limits,
      }, host)
      bystander.catch(() => {}) // awaited below; if an assertion fails first, closing the sandbox must not leave it unhandled
      await new Promise((r) => setTimeout(r, 100)) // the bystander is waiting on its host call when the runaway starts
      const t = Date.now()
      const runaway = sandbox.run({
        // long native steps (QuickJS polls its interrupt handler seldom), each array freed at once (no memory limit ends it)
        botId: 'runaway', version: '1', code: hook('for (;;) new Array(1e5).fill(1)'), entry: 'turn', input: input('y'), limits,
      }, { call: async () => ({}), log() {} })
      const failure = await runaway.then(() => undefined, (err: unknown) => err)
      expect(failure).toBeInstanceOf(SandboxError)
      expect((failure as SandboxError).kind).toBe('timeout')
      // stopped by its run budget, not by the turn's limit (no finer timing here: a cold worker start under load takes seconds)
      expect(Date.now() - t).toBeLessThan(limits.timeoutMs)
      const output = JSON.parse(await bystander) as { errors: string[] }
      expect(output.errors).toEqual([])
      // it started again from the beginning on the new worker: its first host call was repeated, the reply sent once
      expect(calls.filter((m) => m === 'createMessage')).toHaveLength(1)
      expect(calls.filter((m) => m === 'getUser')).toHaveLength(2)
      // (moved when its worker was found held, possibly more than once before it started again, or when it was stopped)
      expect(logs.length).toBeGreaterThan(0)
      // the host was told each time, so that it numbers the repeated calls' results as the first time
      expect(restarts).toBe(logs.length)
      for (const line of logs) expect(line).toMatch(/^warn: This run was restarted from the beginning on (a fresh|another) sandbox worker/)
    } finally {
      await sandbox.close()
    }
  })
})

/**
 * A worker that never starts (stuck loading, or gone before it said it was ready): nothing may wait on
 * it forever. The CI run of stop 22 hung a sandbox test for 120 s; a worker that exited or stalled
 * while starting left the runs waiting on it unanswered. Such workers cannot be produced on demand from
 * real code, so these tests swap in a thread that never says it is ready (the one stand-in here).
 */
describe('QuickJsSandbox: a worker that does not start', () => {
  const input = JSON.stringify({
    event: {
      botId: 'b', conversationId: 'c', createdOn: new Date().toISOString(), direction: 'incoming', id: 'm', integration: 'chat', messageId: 'm',
      payload: { type: 'text', text: 'hi' }, preview: 'hi', state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'u',
    },
    flow: null, conversationStarted: false, budgetMs: 5_000,
  })
  const limits = { budgetMs: 5_000, timeoutMs: 10_000, memoryBytes: 32 * 1024 * 1024 }
  const code = "export const hooks = { async afterIncoming({ client }) { await client.createMessage({ payload: { type: 'text', text: 'answered' } }) } }"
  /** A pool whose first `bad` workers run `source` instead of QuickJS. */
  const poolWith = (source: string, bad: number) => new (class extends QuickJsSandbox {
    protected override createWorker(workerData: WorkerOptions): Worker {
      return bad-- > 0 ? new Worker(source, { eval: true }) : super.createWorker(workerData)
    }
  })({ workers: 1, limits, startTimeoutMs: 2_000 })
  const answer = async (sandbox: QuickJsSandbox) => {
    const sent: string[] = []
    const host: SandboxHost = {
      async call(_method, args) {
        sent.push((args as { payload: { text: string } }).payload.text)
        return { message: { id: 'x' } }
      },
      log() {},
    }
    const output = JSON.parse(await sandbox.run({ botId: 'b', version: '1', code, entry: 'turn', input, limits }, host)) as { errors: string[] }
    return { sent, errors: output.errors }
  }

  for (const [what, source] of [
    ['stays silent', 'setInterval(() => {}, 1000)'],
    ['exits', 'process.exit(3)'],
  ] as const) {
    it(`a run sent to a worker that ${what} before it is ready goes to another worker and is answered`, async () => {
      const sandbox = poolWith(source, 1)
      try {
        expect(await answer(sandbox)).toEqual({ sent: ['answered'], errors: [] })
      } finally {
        await sandbox.close()
      }
    }, 60_000)
  }

  it('when no worker starts, the run fails with the reason instead of waiting forever', async () => {
    const sandbox = poolWith('setInterval(() => {}, 1000)', 100)
    try {
      const failure = await answer(sandbox).then(() => undefined, (err: unknown) => err)
      expect(failure).toBeInstanceOf(SandboxError)
      expect((failure as SandboxError).message).toMatch(/failed to start: it was not ready within 2000 ms/)
    } finally {
      await sandbox.close()
    }
  }, 60_000)
})

/**
 * Issue #13: limits that held only as long as bot code played along. Each of these failed on the code
 * before the fix (see the items 1, 2 and 10).
 */
describe('QuickJsSandbox: containment', () => {
  const input = (text: string, budgetMs: number) => JSON.stringify({
    event: {
      botId: 'b', conversationId: 'c', createdOn: new Date().toISOString(), direction: 'incoming', id: `m-${text}`, integration: 'chat', messageId: `m-${text}`,
      payload: { type: 'text', text }, preview: text, state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'u',
    },
    flow: null, conversationStarted: false, budgetMs,
  })
  const hook = (body: string) => `export const hooks = { async afterIncoming({ event, client }) { if (event.payload.text === 'x') return; ${body} } }`
  const recordingHost = () => {
    const sent: string[] = []
    const calls: string[] = []
    const logs: string[] = []
    const host: SandboxHost = {
      async call(method, args) {
        calls.push(method)
        if (method === 'getUser') await new Promise((r) => setTimeout(r, 1000))
        if (method === 'createMessage') sent.push((args as { payload: { text: string } }).payload.text)
        return method === 'createMessage' ? { message: { id: 'x', payload: (args as { payload: unknown }).payload } } : { user: { id: 'u' } }
      },
      log(level, text) {
        logs.push(`${level}: ${text}`)
      },
    }
    return { host, sent, calls, logs }
  }
  type Settled = { output?: { errors: string[] }; error?: SandboxError }
  const settle = (promise: Promise<string>): Promise<Settled> => promise.then((output) => ({ output: JSON.parse(output) as { errors: string[] } }), (error: unknown) => ({ error: error as SandboxError }))

  it('bot code reaches none of the runtime\'s entry points, so re-entering the runtime cannot reset its budget: the hook ends within its budget, far from the run\'s limit', async () => {
    // the run's own limit is far above the unit's budget: a re-entry that reset the budget ran until it (the defect)
    // (a budget of 2 s, not less: on a loaded machine the hook must still get to its createMessage within it)
    const limits = { budgetMs: 2000, timeoutMs: 30_000, memoryBytes: 32 * 1024 * 1024 }
    const sandbox = new QuickJsSandbox({ workers: 1, limits })
    try {
      const { host, sent } = recordingHost()
      const code = hook(String.raw`
        const reachable = Object.getOwnPropertyNames(globalThis).filter((name) => {
          const v = globalThis[name]
          return v !== null && (typeof v === 'object' || typeof v === 'function') && Object.getOwnPropertyNames(v).some((k) => ['turn', 'beforeIncoming', 'settle', 'budget'].includes(k))
        })
        await client.createMessage({ payload: { type: 'text', text: 'reachable: ' + JSON.stringify(reachable) } })
        for (;;) await globalThis.__parley.turn(JSON.stringify({ budgetMs: 300, event: { ...event, payload: { type: 'text', text: 'x' } }, flow: null, conversationStarted: false }))
      `)
      const t = Date.now()
      const result = await settle(sandbox.run({ botId: 'reenter', version: '1', code, entry: 'turn', input: input('go', limits.budgetMs), limits }, host))
      const ms = Date.now() - t
      expect(sent).toEqual(['reachable: []'])
      // far from the run's limit, which a re-entry resetting the budget ran into (no finer timing: the machine may be loaded)
      expect(ms, `the hook ran ${ms} ms`).toBeLessThan(limits.timeoutMs / 2)
      // the attempt fails as an ordinary error of the hook (there is nothing to call)
      expect(result.output?.errors.join('\n')).toMatch(/hooks\.afterIncoming: cannot read property/)
    } finally {
      await sandbox.close()
    }
  }, 60_000)

  it('a worker whose heap several runs grew, none by half a bot\'s limit, is recycled once that heap is mostly beyond what it holds', async () => {
    // Before: only one run's growth past half the limit, or a heap past the recycle size (limit + 64 MB), recycled a
    // worker, so runs that each grew it less left it holding ~100 MB for good (sandbox-memory failed: 316 MB of heaps
    // kept after the attacks). Run 1 keeps 40 MB in its (cached) VM, run 2 of another bot grows the heap 40 MB more.
    const limits = { budgetMs: 5000, timeoutMs: 10_000, memoryBytes: 128 * 1024 * 1024 }
    const sandbox = new QuickJsSandbox({ workers: 1, limits })
    const metrics = new MetricsRegistry()
    sandbox.registerMetrics(metrics)
    const retired = async () => Number(/^parley_sandbox_workers_retired (\d+)$/m.exec(await metrics.render())?.[1])
    try {
      const run = (botId: string, body: string, extra = '') => sandbox.run({
        botId, version: '1', entry: 'turn', input: input('go', limits.budgetMs), limits, code: `${extra}\n${hook(body)}`,
      }, recordingHost().host)
      const kept = await run('keeper', 'kept.push(...Array.from({ length: 40 }, () => new Float64Array(131072).fill(1)))', 'const kept = []')
      expect(JSON.parse(kept).errors).toEqual([])
      expect(await retired()).toBe(0)
      const more = await run('grower', 'const xs = Array.from({ length: 40 }, () => new Float64Array(131072).fill(2)); await client.createMessage({ payload: { type: \'text\', text: String(xs.length) } })')
      expect(JSON.parse(more).errors).toEqual([])
      await new Promise((r) => setTimeout(r, 200))
      expect(await retired()).toBe(1)
    } finally {
      await sandbox.close()
    }
  }, 60_000)

  describe('workers give their memory and threads back after an attack (sandbox-memory failed in stop 33\'s CI: 351 MB of heaps and 5 workers kept)', () => {
    const limits = { budgetMs: 5000, timeoutMs: 10_000, memoryBytes: 128 * 1024 * 1024 }
    const MB = 1024 * 1024
    async function pool(options: { workers: number; heapBytes?: number }) {
      const sandbox = new QuickJsSandbox({ ...options, limits })
      const metrics = new MetricsRegistry()
      sandbox.registerMetrics(metrics)
      const series = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await metrics.render())?.[1])
      const run = (botId: string, body: string, extra = '') => settle(sandbox.run({
        botId, version: '1', entry: 'turn', input: input('go', limits.budgetMs), limits, code: `${extra}\n${hook(body)}`,
      }, recordingHost().host))
      return { sandbox, series, run }
    }

    it('a run that caught an out-of-memory error after growing the heap (refused at the pool\'s budget, before half its limit) retires its worker, and its bot is a suspect', async () => {
      // Before: the run ended normally, not "limited", and its worker kept the ~48 MB it grew to for good.
      // 80 MB of heaps: the two workers' 16 MB each, and 48 MB for the bomb (less than half of its 128 MB limit).
      const { sandbox, series, run } = await pool({ workers: 1, heapBytes: 80 * MB })
      try {
        const bomb = await run('bomb', "const a = []; try { for (;;) a.push(new Float64Array(131072).fill(1)) } catch (e) { a.length = 0 } await client.createMessage({ payload: { type: 'text', text: 'caught' } })")
        expect(bomb.error).toBeUndefined()
        expect(bomb.output?.errors).toEqual([])
        await new Promise((r) => setTimeout(r, 200))
        expect(await series('parley_sandbox_workers_retired')).toBe(1)
        expect(await series('parley_sandbox_quarantined_bots')).toBe(1)
      } finally {
        await sandbox.close()
      }
    }, 60_000)

    it('a worker whose heap grew by more than a bystander\'s share is retired while the pool\'s heaps hold more than half their budget', async () => {
      // Before: a worker was recycled only past its start + half a bot's limit (+64 MB), so runs that each grew a
      // worker's heap less, while others took the rest of the pool's budget, left every worker holding some of it.
      // 128 MB of heaps: 32 MB for the two workers' start, 24 MB kept by one bot (56 MB: under half), 24 MB of garbage
      // by another (80 MB: over half; the worker's heap 64 MB, under its start + 64 MB).
      const { sandbox, series, run } = await pool({ workers: 1, heapBytes: 128 * MB })
      try {
        const kept = await run('keeper', 'kept.push(...Array.from({ length: 24 }, () => new Float64Array(131072).fill(1)))', 'const kept = []')
        expect(kept.output?.errors).toEqual([])
        expect(await series('parley_sandbox_workers_retired')).toBe(0)
        const more = await run('grower', "const xs = Array.from({ length: 24 }, () => new Float64Array(131072).fill(2)); await client.createMessage({ payload: { type: 'text', text: String(xs.length) } })")
        expect(more.output?.errors).toEqual([])
        await new Promise((r) => setTimeout(r, 200))
        expect(await series('parley_sandbox_workers_retired')).toBe(1)
      } finally {
        await sandbox.close()
      }
    }, 60_000)

    it('a worker started while the others were held is stopped once it is idle and they are free again: the pool goes back to its size', async () => {
      // Before: the worker started for the second run stayed for good (a thread and a heap each).
      const { sandbox, series, run } = await pool({ workers: 1 })
      try {
        expect((await run('warm', "await client.createMessage({ payload: { type: 'text', text: 'warm' } })")).output?.errors).toEqual([])
        // holds its worker inside one QuickJS call for 1.5 s, within its budget: not interrupted, nothing to retire
        const holding = run('holder', 'const end = Date.now() + 1500; while (Date.now() < end) {}')
        await new Promise((r) => setTimeout(r, 400))
        const other = await run('other', "await client.createMessage({ payload: { type: 'text', text: 'other' } })")
        expect(other.output?.errors).toEqual([])
        expect(await series('parley_sandbox_workers')).toBe(2)
        expect((await holding).output?.errors).toEqual([])
        expect(await series('parley_sandbox_workers')).toBe(1)
        expect(await series('parley_sandbox_workers_retired')).toBe(0)
      } finally {
        await sandbox.close()
      }
    }, 60_000)
  })

  it('a run that exhausts the shared heap is stopped (out of memory; out of time on a loaded machine); a bystander in flight on that worker is started again on a fresh one and completes once', async () => {
    const limits = { budgetMs: 5000, timeoutMs: 10_000, memoryBytes: 128 * 1024 * 1024 }
    const sandbox = new QuickJsSandbox({ workers: 1, limits })
    try {
      const bystander = recordingHost()
      // waits on a host call (1 s) while the bomb runs, then allocates a little
      const waiting = settle(sandbox.run({
        botId: 'bystander', version: '1', entry: 'turn', input: input('go', limits.budgetMs), limits,
        code: hook("await client.getUser({ id: 'u' }); const xs = []; for (let i = 0; i < 200; i++) xs.push(new Array(1e4).fill(i)); await client.createMessage({ payload: { type: 'text', text: 'done ' + xs.length } })"),
      }, bystander.host))
      await new Promise((r) => setTimeout(r, 200))
      const bomb = await settle(sandbox.run({
        botId: 'bomb', version: '1', entry: 'turn', input: input('go', limits.budgetMs), limits,
        code: hook('const a = []; for (;;) a.push(new Array(1e5).fill(1.5))'),
      }, { call: async () => ({}), log() {} }))
      // caught inside by the prelude (a hook's error) or failing the run: out of memory or, on a machine loaded
      // enough that the allocations do not reach the limit within the budget, out of time; stopped either way
      expect(bomb.error?.kind ?? bomb.output?.errors.join('\n')).toMatch(/memory|timeout|timed out/)
      const survived = await waiting
      expect(survived.error).toBeUndefined()
      expect(survived.output?.errors).toEqual([])
      expect(bystander.sent).toEqual(['done 200'])
    } finally {
      await sandbox.close()
    }
  }, 120_000)

  it('interrupted and out-of-memory VMs are never freed in place: no QuickJS abort ("list_empty(&rt->gc_obj_list)") and no worker crash', async () => {
    const limits = { budgetMs: 200, timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024 }
    const sandbox = new QuickJsSandbox({ workers: 2, limits })
    const printed: string[] = []
    const write = process.stderr.write.bind(process.stderr)
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      printed.push(String(chunk))
      return write(chunk, ...rest)
    }) as typeof process.stderr.write
    try {
      const bodies = [
        'for (;;) {}',
        'for (;;) await null',
        'Promise.resolve().then(function f() { return Promise.resolve().then(f) })',
        'await new Promise(() => { Promise.resolve().then(function f() { return Promise.resolve().then(f) }) })',
        'new Array(1e9).fill(0)',
        "let s = 'x'; for (;;) s += s",
        'const a = []; for (;;) a.push({ x: a.length })',
        'const a = []; for (;;) a.push(new Array(1e5).fill(1))',
        'const keep = []; for (;;) { try { keep.push(new Array(1e5).fill(1)) } catch (e) {} }',
        'for (;;) { try { await (async () => { for (;;) {} })() } catch (e) {} }',
        'await new Promise(() => {})',
        'const f = () => Promise.resolve().then(f); await f()',
        'const f = (n) => f(n + 1) + 1; f(0)',
      ]
      const logs: string[] = []
      const host: SandboxHost = { call: async () => ({ message: { id: 'm' } }), log: (level, text) => logs.push(`${level}: ${text}`) }
      const results: Settled[] = []
      for (const [i, body] of bodies.entries()) {
        // each VM first serves an ordinary run (freeing such a reused VM after an interrupt is what aborted)
        const code = hook(`if (event.payload.text === 'warm') return client.createMessage({ payload: { type: 'text', text: 'warm' } }); ${body}`)
        // (with a generous budget: this ordinary run is not what is tested, and a busy machine may take a while to compile)
        const warmLimits = { ...limits, budgetMs: 5_000, timeoutMs: 10_000 }
        const warm = await settle(sandbox.run({ botId: `hostile-${i}`, version: '1', entry: 'turn', input: input('warm', warmLimits.budgetMs), limits: warmLimits, code }, host))
        expect(warm.error, `the ordinary run before ${JSON.stringify(body)}: ${warm.error?.message}`).toBeUndefined()
        expect(warm.output?.errors).toEqual([])
        results.push(await settle(sandbox.run({ botId: `hostile-${i}`, version: '1', entry: 'turn', input: input('go', limits.budgetMs), limits, code }, host)))
      }
      // each failed, except the chain left running, which the run outlives (its VM is discarded, and logged)
      expect(logs.filter((l) => /Promise jobs were still running/.test(l)).length).toBeGreaterThan(0)
      for (const result of results.filter((_, i) => i !== 2)) expect(result.error?.kind ?? result.output?.errors.join('\n')).toMatch(/timeout|timed out|memory|stack overflow|interrupted|string too long|invalid array length/i)
      // no run had to be started again because a worker died under it
      expect(logs.filter((l) => /restarted/.test(l))).toEqual([])
      // the sandbox is still good
      const fine = recordingHost()
      const ok = await settle(sandbox.run({ botId: 'fine', version: '1', entry: 'turn', input: input('go', limits.budgetMs), limits, code: hook("await client.createMessage({ payload: { type: 'text', text: 'fine' } })") }, fine.host))
      expect(ok.output?.errors).toEqual([])
      expect(fine.sent).toEqual(['fine'])
      await new Promise((r) => setTimeout(r, 300)) // a worker's stderr reaches this thread asynchronously
      expect(printed.join('')).not.toMatch(/list_empty|Aborted\(/)
      expect(results.filter((r) => r.error?.kind === 'crashed')).toEqual([])
    } finally {
      process.stderr.write = write
      await sandbox.close()
    }
  }, 60_000)
})

/**
 * Every run waits for its worker to be ready: that wait must leave nothing behind. It raced the worker's start
 * against a promise that settles only when the sandbox closes, and each race left a reaction on that promise: one
 * closure, context and promise per run, kept until the sandbox closed (a soak of `parley serve` with the demo bot grew
 * its heap by ~100,000 pending promises per 100,000 messages; measured with heap snapshots). Asserted on memory, not
 * time: the server thread's heap after a full collection, before and after many runs, with V8's own `gc` (exposed at
 * run time). Before the fix, 20,000 runs grew it by ~6 MB.
 */
describe('QuickJsSandbox: runs leave nothing on the server thread', () => {
  it('20,000 runs leave the heap after a full collection within 1 MB of where it was', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const sandbox = new QuickJsSandbox({ workers: 1 })
    const limits = { budgetMs: 1000, timeoutMs: 5000, memoryBytes: 32 * 1024 * 1024 }
    const host: SandboxHost = { async call() { return {} }, log() {} }
    const code = 'export const hooks = { async afterIncoming() {} }'
    const input = JSON.stringify({ event: { id: 'm', type: 'text', payload: { type: 'text', text: 'x' }, conversationId: 'c', userId: 'u', state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} } }, flow: null, conversationStarted: false, budgetMs: 1000 })
    const runs = async (n: number) => {
      for (let i = 0; i < n; i += 50) {
        await Promise.all(Array.from({ length: 50 }, () => sandbox.run({ botId: 'b', version: '1', code, entry: 'turn', input, limits }, host)))
      }
    }
    const heapAfterGc = () => {
      gc()
      gc()
      return process.memoryUsage().heapUsed
    }
    try {
      await runs(2_000) // warm-up: the code loaded, the pool's structures at their size
      const before = heapAfterGc()
      await runs(20_000)
      const grown = heapAfterGc() - before
      expect(grown, `the heap grew by ${(grown / 1024 / 1024).toFixed(2)} MB over 20,000 runs`).toBeLessThan(1024 * 1024)
    } finally {
      await sandbox.close()
    }
  }, 120_000)
})
