import { availableParallelism } from 'node:os'
import { PASSED_THROUGH_METHODS } from '../http/operations/index.js'
import { Worker } from 'node:worker_threads'
import type { BotSummary } from './prelude-contract.js'
import type { FromWorker, ToWorker, WorkerOptions } from './quickjs-protocol.js'
import { WorkerSlots, type Slot } from './quickjs-slots.js'
import { MAX_MOVES, Watchdog } from './quickjs-watchdog.js'
import { DEFAULT_LIMITS, SandboxError, type BotSandbox, type CheckResult, type SandboxHost, type SandboxLimits, type SandboxRun } from './sandbox.js'
import type { MetricsRegistry } from '../lib/metrics.js'
import { heapSizes } from './sandbox-heap.js'

export type { WorkerOptions }

/** A run whose worker failed to start (or was stopped before it did) is sent to another this many times. */
const MAX_START_FAILURES = 3

/**
 * Bot code in QuickJS (WebAssembly) on a pool of worker threads, so that it never runs in the
 * server's V8 context nor on its event loop. Each run goes to the least busy worker; a worker
 * that stops answering (its run overran every limit) is terminated and replaced.
 *
 * Its parts: the workers (quickjs-slots.ts), the watchdog with evacuation and quarantine
 * (quickjs-watchdog.ts, over the slots), and the worker threads themselves (quickjs-worker.ts,
 * spoken to in the messages of quickjs-protocol.ts).
 */
export class QuickJsSandbox implements BotSandbox {
  private readonly slots: WorkerSlots
  private readonly watchdog: Watchdog
  private nextId = 1

  /**
   * Workers start on first use, all of them (a server without bot code never pays for them). `heapBytes`: the most
   * all the workers' heaps may hold together (by default one bot at its memory limit per worker, plus 64 MB).
   */
  constructor(private readonly options: { workers?: number; limits?: Partial<SandboxLimits>; heapBytes?: number | undefined; startTimeoutMs?: number } = {}) {
    const size = Math.max(1, options.workers ?? Math.max(2, Math.min(4, availableParallelism())))
    this.slots = new WorkerSlots({
      size,
      heapSizes: heapSizes(this.limits, size, options.heapBytes),
      startTimeoutMs: options.startTimeoutMs,
      // Bot code's client passes the operation table's methods to the host (src/http/operations).
      methods: PASSED_THROUGH_METHODS,
      createWorker: (workerData) => this.createWorker(workerData),
      onMessage: (slot, message) => this.onMessage(slot, message),
      onCrash: (slot, message) => this.watchdog.crashed(slot, message),
    })
    this.watchdog = new Watchdog(this.slots, {
      dispatch: (request, host, moves, evacuations) => this.dispatch(request, host, moves, evacuations),
      check: (code) => this.check(code),
    })
  }

  private get limits(): SandboxLimits {
    return { ...DEFAULT_LIMITS, ...this.options.limits }
  }

  /** The worker thread running QuickJS (a seam for tests that need a worker which never starts). */
  protected createWorker(workerData: WorkerOptions): Worker {
    // Under tsx/vitest the worker is TypeScript too: a tiny bootstrap registers tsx, then imports it.
    return import.meta.url.endsWith('.ts')
      ? new Worker(
          `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./quickjs-worker.ts', import.meta.url).href)}) })`,
          { eval: true, workerData },
        )
      : new Worker(new URL('./quickjs-worker.js', import.meta.url), { workerData })
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        return
      case 'retire':
        // Exhausted heap: the runs still there would fail for want of memory; they start again elsewhere.
        if (message.now) return this.watchdog.stopStuck(slot, -1, 'The sandbox worker ran out of memory')
        return this.slots.retire(slot)
      case 'checked': {
        const check = slot.checks.get(message.id)
        if (!check) return
        slot.checks.delete(message.id)
        clearTimeout(check.watchdog)
        if (message.ok) check.resolve({ ok: true, summary: JSON.parse(message.summary!) as BotSummary })
        else check.resolve({ ok: false, error: message.error ?? 'unknown error' })
        return this.slots.settled(slot)
      }
      case 'log':
        return slot.runs.get(message.id)?.host.log(message.level, message.text)
      case 'hostCall': {
        const run = slot.runs.get(message.id)
        const reply = (ok: boolean, value: string) =>
          slot.worker.postMessage({ type: 'hostResult', id: message.id, callId: message.callId, ok, value } satisfies ToWorker)
        if (!run) return reply(false, 'The run is over')
        let args: unknown
        try {
          args = JSON.parse(message.args)
        } catch {
          return reply(false, 'Host call arguments must be JSON')
        }
        run.host.call(message.method, args).then(
          (value) => reply(true, JSON.stringify(value ?? null)),
          (err: unknown) => reply(false, err instanceof Error ? `${(err as { type?: string }).type ?? err.name}: ${err.message}` : String(err)),
        )
        return
      }
      case 'done': {
        const run = slot.runs.get(message.id)
        if (!run) return
        slot.runs.delete(message.id)
        clearTimeout(run.watchdog)
        if (message.ok) {
          if (message.limited) this.watchdog.suspect(run.request.botId)
          run.resolve(message.output!)
        } else if (message.retry && run.moves < MAX_MOVES && !this.slots.closed) this.watchdog.move(run)
        else {
          if (message.kind === 'timeout' || message.kind === 'memory') this.watchdog.suspect(run.request.botId)
          run.reject(new SandboxError(message.kind ?? 'error', message.error ?? 'unknown error'))
        }
        this.slots.settled(slot)
      }
    }
  }

  async check(code: string): Promise<CheckResult> {
    if (this.slots.closed) throw new SandboxError('crashed', 'The sandbox is closed')
    const slot = this.slots.leastBusy(false)
    await this.slots.ready(slot)
    const id = this.nextId++
    const limits = this.limits
    return new Promise((resolve) => {
      const watchdog = this.watchdog.arm(slot, id, limits.budgetMs, 'Loading the bot code took too long')
      slot.checks.set(id, { code, resolve, watchdog })
      this.watchdog.start()
      slot.worker.postMessage({ type: 'check', id, code, limits } satisfies ToWorker)
    })
  }

  run(request: SandboxRun, host: SandboxHost): Promise<string> {
    return this.dispatch(request, host, 0, 0)
  }

  private async dispatch(request: SandboxRun, host: SandboxHost, moves: number, evacuations: number, startFailures = 0): Promise<string> {
    if (this.slots.closed) throw new SandboxError('crashed', 'The sandbox is closed')
    const slot = this.slots.leastBusy(this.watchdog.isSuspect(request.botId))
    let failure: unknown
    try {
      await this.slots.ready(slot)
      if (!this.slots.all.includes(slot) || slot.retiring) failure = new SandboxError('crashed', 'The sandbox worker was stopped before the run could start')
    } catch (err) {
      failure = err
    }
    if (failure !== undefined) {
      // Not the run's doing: it goes to another worker (a fresh one is started in its place).
      if (this.slots.closed || startFailures + 1 >= MAX_START_FAILURES) throw failure
      return this.dispatch(request, host, moves, evacuations, startFailures + 1)
    }
    const id = this.nextId++
    const { limits } = request
    return new Promise((resolve, reject) => {
      const watchdog = this.watchdog.arm(slot, id, limits.timeoutMs, 'The bot code stopped responding and was terminated')
      slot.runs.set(id, { request, host, resolve, reject, watchdog, moves, evacuations })
      this.watchdog.start()
      slot.worker.postMessage({
        type: 'run', id, botKey: `${request.botId}@${request.version}`, code: request.code, entry: request.entry, input: request.input, limits,
      } satisfies ToWorker)
    })
  }

  registerMetrics(metrics: MetricsRegistry): void {
    metrics.collect('parley_sandbox_workers', 'Worker threads running bot code (quarantine workers excluded)', () => this.slots.live(false).length)
    metrics.collect('parley_sandbox_quarantine_workers', 'Worker threads running only quarantined bots\' code', () => this.slots.live(true).length)
    metrics.collect('parley_sandbox_quarantined_bots', 'Bots whose code runs on the quarantine workers now (it recently hit a limit)', () => this.watchdog.quarantined)
    metrics.collect('parley_sandbox_workers_retired', 'Workers stopped and replaced since the start (stuck, out of memory, crashed)', () => this.slots.retired, 'counter')
    metrics.collect('parley_sandbox_runs_evacuated', 'Runs moved off a held worker to another since the start', () => this.watchdog.evacuated, 'counter')
    metrics.collect('parley_sandbox_heap_bytes', 'WebAssembly heaps of the workers together (those being stopped included), in bytes', () => this.slots.heap.bytes)
  }

  async close(): Promise<void> {
    this.watchdog.stop()
    await this.slots.close()
  }
}
