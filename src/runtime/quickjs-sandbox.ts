import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { BotSummary } from './prelude-contract.js'
import { BEAT_DEADLINE, BEAT_HEAP, BEAT_HOG, BEAT_HOG_RUN, BEAT_RUN, BEAT_SINCE, BEAT_SLOTS, type FromWorker, type ToWorker, type WorkerOptions } from './quickjs-protocol.js'
import { DEFAULT_LIMITS, SandboxError, type BotSandbox, type CheckResult, type SandboxHost, type SandboxLimits, type SandboxRun } from './sandbox.js'
import type { MetricsRegistry } from '../lib/metrics.js'
import { heapSizes, PoolHeap } from './sandbox-heap.js'

export type { WorkerOptions }

/** Extra time a worker gets past a run's own limit before it is presumed stuck and replaced. */
const STUCK_GRACE_MS = 1_000
/**
 * A QuickJS call still running this long past its deadline is stuck (QuickJS polls its interrupt
 * handler by operation count, so a loop of long native steps is not interrupted in time).
 */
const OVERRUN_MS = 250
/** How often the pool reads the workers' heartbeats while runs are in flight. */
const WATCH_MS = 25
/**
 * New work avoids a worker inside one QuickJS call for longer than this, when another is free (an
 * ordinary call takes well under a millisecond: one this long may be about to hold the worker).
 */
const BUSY_MS = 10
/**
 * A worker inside one QuickJS call for longer than this is held: no run can go on there until the call
 * ends (QuickJS cannot be preempted), so the other runs on it are evacuated (see evacuate()).
 */
const HOT_MS = 50
/**
 * Nor does a worker where one VM ran promise jobs for a whole drain slice within this long: code that
 * burns CPU in short steps (a promise or microtask loop, drained in slices) would otherwise delay every
 * run sent there. Ordinary turns never fill a slice.
 */
const HOG_MS = 100
/**
 * A bot whose code was stopped at a time or memory limit (the run failed, or its code was interrupted
 * or ran out of memory and the prelude went on), or left promise jobs running, is a suspect for this long: its runs go to the quarantine workers (low OS
 * priority, never shared with other bots' runs).
 */
const SUSPECT_MS = 10 * 60_000
/** Evacuations a run may go through (it is never their cause); crashes and stops count in MAX_MOVES. */
const MAX_EVACUATIONS = 10
/**
 * OS priority (nice) of quarantine workers. 0, the same as every other thread: hook budgets are wall time,
 * so a lowered priority made a suspect bot's turns starve past their budget whenever the machine was busy
 * (at nice 19, and still at nice 10 under a load of 12 on 2 cores): each turn then failed, which kept the bot
 * suspect, and the bot stopped working until the load went down. Quarantine still keeps its runs on workers
 * of their own, so its next attack holds no other bot's worker.
 */
const QUARANTINE_NICE = 0
/** A run is moved to a fresh worker at most this many times when its worker is stopped for another run. */
const MAX_MOVES = 2
/**
 * A worker that has not said it is ready this long after it was started is presumed stuck and replaced
 * (a cold start on a loaded 2-core machine took up to 5 s under tsx). Nothing may wait on a worker forever.
 */
const START_TIMEOUT_MS = 30_000
/** A run whose worker failed to start (or was stopped before it did) is sent to another this many times. */
const MAX_START_FAILURES = 3

interface PendingRun {
  request: SandboxRun
  host: SandboxHost
  resolve(output: string): void
  reject(err: Error): void
  watchdog: NodeJS.Timeout
  moves: number
  evacuations: number
}

interface PendingCheck {
  code: string
  resolve(result: CheckResult): void
  watchdog: NodeJS.Timeout
}

interface Slot {
  worker: Worker
  beat: Float64Array
  ready: Promise<void>
  runs: Map<number, PendingRun>
  checks: Map<number, PendingCheck>
  started: boolean
  /** Fails `ready` (a worker stopped, or timed out, before it started); nothing once it has started. */
  abortStart(err: Error): void
  /** Takes no new work; terminated once its runs and checks are over (its heap grew, or holds abandoned VMs). */
  retiring: boolean
  /** Runs only suspects' code (see SUSPECT_MS), at a low OS priority. */
  quarantine: boolean
}

/**
 * Bot code in QuickJS (WebAssembly) on a pool of worker threads, so that it never runs in the
 * server's V8 context nor on its event loop. Each run goes to the least busy worker; a worker
 * that stops answering (its run overran every limit) is terminated and replaced.
 */
export class QuickJsSandbox implements BotSandbox {
  private readonly slots: Slot[] = []
  private readonly size: number
  private nextId = 1
  private closed = false
  /** Settles when close() is called, so that nothing waits on a worker that will never start. */
  private readonly closing: Promise<never>
  private signalClosing: (err: Error) => void = () => {}
  private watch: NodeJS.Timeout | undefined
  /** Workers retired so far, and runs moved off a held worker (metrics). */
  private retired = 0
  private evacuated = 0

  /** What all the workers' heaps hold together. */
  private readonly heap = new PoolHeap()

  /**
   * Workers start on first use, all of them (a server without bot code never pays for them). `heapBytes`: the most
   * all the workers' heaps may hold together (by default one bot at its memory limit per worker, plus 64 MB).
   */
  constructor(private readonly options: { workers?: number; limits?: Partial<SandboxLimits>; heapBytes?: number | undefined; startTimeoutMs?: number } = {}) {
    this.size = Math.max(1, options.workers ?? Math.max(2, Math.min(4, availableParallelism())))
    this.closing = new Promise<never>((_resolve, reject) => {
      this.signalClosing = reject
    })
    this.closing.catch(() => {})
  }

  private get limits(): SandboxLimits {
    return { ...DEFAULT_LIMITS, ...this.options.limits }
  }

  private spawn(quarantine = false): Slot {
    const shared = new SharedArrayBuffer(BEAT_SLOTS * Float64Array.BYTES_PER_ELEMENT)
    const beat = new Float64Array(shared)
    const workerData: WorkerOptions = {
      beat: shared, pool: this.heap.shared, ...heapSizes(this.limits, this.size, this.options.heapBytes), nice: quarantine ? QUARANTINE_NICE : 0,
    }
    const worker = this.createWorker(workerData)
    worker.unref()
    const slot: Slot = {
      worker, beat, ready: undefined as never, runs: new Map(), checks: new Map(), started: false, abortStart: () => {}, retiring: false, quarantine,
    }
    // Settles whatever happens to the worker: it says it is ready, fails, exits, is stopped, or takes too long.
    slot.ready = new Promise((resolve, reject) => {
      const startTimeoutMs = this.options.startTimeoutMs ?? START_TIMEOUT_MS
      const settle = (err?: Error) => {
        clearTimeout(timer)
        worker.off('message', onMessage)
        worker.off('error', settle)
        worker.off('exit', onExit)
        slot.abortStart = () => {}
        if (err) reject(err)
        else resolve()
      }
      const onMessage = (message: FromWorker) => {
        if (message.type !== 'ready') return
        slot.started = true
        settle()
      }
      const onExit = (code: number) => settle(new Error(`it exited (code ${code}) before it was ready`))
      const timer = setTimeout(() => settle(new Error(`it was not ready within ${startTimeoutMs} ms`)), startTimeoutMs)
      timer.unref()
      slot.abortStart = settle
      worker.on('message', onMessage)
      worker.once('error', settle)
      worker.once('exit', onExit)
    })
    slot.ready.catch(() => {})
    worker.on('message', (message: FromWorker) => this.onMessage(slot, message))
    worker.on('error', () => this.crashed(slot, 'The sandbox worker crashed'))
    worker.on('exit', () => this.crashed(slot, 'The sandbox worker exited'))
    return slot
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

  /** Fails everything the slot was doing and drops it; the next request starts a fresh worker. */
  private replace(slot: Slot, kind: 'crashed' | 'timeout', message: string): void {
    if (!this.drop(slot)) return
    for (const run of slot.runs.values()) run.reject(new SandboxError(kind, message))
    for (const check of slot.checks.values()) check.resolve({ ok: false, error: message })
  }

  /**
   * A worker that died (QuickJS aborted, typically while freeing a VM its run left mid-job, after
   * that run was answered): the runs still in flight there start again on another worker, each at
   * most MAX_MOVES times (a run that itself kills its worker fails in the end).
   */
  private crashed(slot: Slot, message: string): void {
    if (!this.drop(slot)) return
    this.replenish()
    for (const run of slot.runs.values()) {
      if (run.moves >= MAX_MOVES || this.closed) run.reject(new SandboxError('crashed', message))
      else this.move(run)
    }
    for (const check of slot.checks.values()) check.resolve({ ok: false, error: message })
  }

  /** Starts a run again from the beginning on another worker; its logs say so (its host calls so far are repeated). */
  private move(run: PendingRun): void {
    run.host.log('warn', 'This run was restarted from the beginning on a fresh sandbox worker: the one it ran on was stopped (held by other code)')
    run.host.restarted?.()
    this.dispatch(run.request, run.host, run.moves + 1, run.evacuations).then(run.resolve, run.reject)
  }

  /**
   * A worker held by one run (`culprit`), inside one long QuickJS call or draining an endless chain of
   * promise jobs: QuickJS cannot be preempted, so every other run there would wait for it (up to the
   * culprit's whole budget, and the conversations behind those runs with them). They start again from
   * the beginning on another worker now (their host calls so far are repeated: the bot runtime's
   * replies have deterministic ids). Wall time is all the pool sees (a thread the OS left waiting looks
   * the same), so this moves work but suspects nobody: only a limit reached does (see SUSPECT_MS).
   */
  private evacuate(slot: Slot, culprit: number): void {
    if (slot.quarantine) return // suspects share the quarantine workers
    for (const [id, run] of [...slot.runs]) {
      if (id === culprit || run.evacuations >= MAX_EVACUATIONS) continue
      slot.runs.delete(id)
      clearTimeout(run.watchdog)
      this.evacuated++
      run.host.log('warn', 'This run was restarted from the beginning on another sandbox worker: the one it ran on was held by other code')
      run.host.restarted?.()
      this.dispatch(run.request, run.host, run.moves, run.evacuations + 1).then(run.resolve, run.reject)
    }
    for (const [id, check] of [...slot.checks]) {
      if (id === culprit) continue
      slot.checks.delete(id)
      clearTimeout(check.watchdog)
      this.check(check.code).then(check.resolve, (err: Error) => check.resolve({ ok: false, error: err.message }))
    }
  }

  private readonly suspects = new Map<string, number>()

  /** Runs of this bot go to the quarantine workers for SUSPECT_MS. */
  private suspect(botId: string): void {
    this.suspects.set(botId, Date.now() + SUSPECT_MS)
  }

  private isSuspect(botId: string): boolean {
    const until = this.suspects.get(botId)
    if (until === undefined) return false
    if (until > Date.now()) return true
    this.suspects.delete(botId)
    return false
  }

  /**
   * Keeps the ordinary pool at its size and one quarantine worker ready, after a worker was dropped or
   * retired (a suspect's next run must not wait for a worker to start, nor run among other bots').
   */
  private replenish(): void {
    if (this.closed || this.slots.length === 0) return
    if (this.live(false).length < this.size) this.slots.push(this.spawn())
    if (this.live(true).length === 0) this.slots.push(this.spawn(true))
  }

  /** Terminates a slot's worker and forgets it (its pending work stays in its maps); false if already dropped. */
  private drop(slot: Slot): boolean {
    const index = this.slots.indexOf(slot)
    if (index === -1) return false
    this.slots.splice(index, 1)
    for (const run of slot.runs.values()) clearTimeout(run.watchdog)
    for (const check of slot.checks.values()) clearTimeout(check.watchdog)
    slot.abortStart(new Error('it was stopped before it was ready'))
    slot.worker.removeAllListeners('exit')
    // Its heap counts against the pool's budget until the thread is gone (and its memory with it).
    void slot.worker.terminate().finally(() => this.heap.release(slot.beat[BEAT_HEAP]!))
    return true
  }

  /**
   * Stops a worker held by one run (`culprit`: a run id, or a check id) that overran its limits: the
   * culprit fails with a timeout; the other runs and checks that were on the worker (bystanders,
   * possibly of other bots) start again from the beginning on another worker. A moved run repeats its
   * host calls up to that point: the bot runtime's replies have deterministic ids, so a user never
   * gets one twice (as after a crash).
   */
  private stopStuck(slot: Slot, culprit: number, message: string): void {
    if (!this.drop(slot)) return
    this.replenish()
    const held = slot.runs.get(culprit)
    if (held) this.suspect(held.request.botId)
    for (const [id, run] of slot.runs) {
      if (id === culprit || run.moves >= MAX_MOVES) run.reject(new SandboxError('timeout', message))
      else this.move(run)
    }
    for (const [id, check] of slot.checks) {
      if (id === culprit) check.resolve({ ok: false, error: message })
      else this.check(check.code).then(check.resolve, (err: Error) => check.resolve({ ok: false, error: err.message }))
    }
  }

  /**
   * A worker asked to be retired (its heap grew, or it holds VMs abandoned after a limit): it takes no
   * new work, a fresh worker takes its place, and it is terminated as soon as its runs are over.
   */
  private retire(slot: Slot): void {
    if (slot.retiring || !this.slots.includes(slot)) return
    slot.retiring = true
    this.retired++
    this.replenish()
    this.dropIfRetired(slot)
  }

  private dropIfRetired(slot: Slot): void {
    if (slot.retiring && slot.runs.size + slot.checks.size === 0) this.drop(slot)
  }

  /** The slots taking new work: the ordinary pool, or the quarantine's. */
  private live(quarantine: boolean): Slot[] {
    return this.slots.filter((slot) => !slot.retiring && slot.quarantine === quarantine)
  }

  /** Reads the heartbeats: a worker inside one QuickJS call well past that call's deadline is stopped. */
  private watchHeartbeats(): void {
    const now = Date.now()
    let busy = false
    for (const slot of [...this.slots]) {
      if (slot.runs.size + slot.checks.size > 0) busy = true
      const since = slot.beat[BEAT_SINCE]!
      if (since !== 0 && now > slot.beat[BEAT_DEADLINE]! + OVERRUN_MS) {
        this.stopStuck(slot, slot.beat[BEAT_RUN]!, 'The bot code ran past its limit without yielding (for example allocating near the memory limit) and was stopped')
      } else if (since !== 0 && now - since > HOT_MS) {
        this.evacuate(slot, slot.beat[BEAT_RUN]!)
      } else if (now - slot.beat[BEAT_HOG]! < HOG_MS) {
        this.evacuate(slot, slot.beat[BEAT_HOG_RUN]!)
      }
    }
    if (!busy) {
      clearInterval(this.watch)
      this.watch = undefined
    }
  }

  private startWatch(): void {
    if (this.watch) return
    this.watch = setInterval(() => this.watchHeartbeats(), WATCH_MS)
    this.watch.unref()
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        return
      case 'retire':
        // Exhausted heap: the runs still there would fail for want of memory; they start again elsewhere.
        if (message.now) return this.stopStuck(slot, -1, 'The sandbox worker ran out of memory')
        return this.retire(slot)
      case 'checked': {
        const check = slot.checks.get(message.id)
        if (!check) return
        slot.checks.delete(message.id)
        clearTimeout(check.watchdog)
        if (message.ok) check.resolve({ ok: true, summary: JSON.parse(message.summary!) as BotSummary })
        else check.resolve({ ok: false, error: message.error ?? 'unknown error' })
        return this.dropIfRetired(slot)
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
          if (message.limited) this.suspect(run.request.botId)
          run.resolve(message.output!)
        } else if (message.retry && run.moves < MAX_MOVES && !this.closed) this.move(run)
        else {
          if (message.kind === 'timeout' || message.kind === 'memory') this.suspect(run.request.botId)
          run.reject(new SandboxError(message.kind ?? 'error', message.error ?? 'unknown error'))
        }
        this.dropIfRetired(slot)
      }
    }
  }

  /**
   * The least busy worker that is not held inside one long QuickJS call (work sent there would wait
   * behind it, and be moved if that call turns out stuck). When every worker is held, one more is
   * started (up to twice the pool size: held workers end at their run's deadline).
   */
  private leastBusy(quarantine: boolean): Slot {
    // The whole pool starts on first use: a worker started only when a second run comes along makes
    // that run wait for its start (QuickJS's WebAssembly and the prelude), longer than a busy turn
    // would have held it on the first worker. The quarantine's one worker starts with them, so that a
    // suspect's next run never waits for one to start.
    const size = quarantine ? 1 : this.size
    if (this.slots.length === 0) {
      for (let i = 0; i < this.size; i++) this.slots.push(this.spawn())
      this.slots.push(this.spawn(true))
    }
    let live = this.live(quarantine)
    if (live.length === 0) {
      this.slots.push(this.spawn(quarantine))
      live = this.live(quarantine)
    }
    const now = Date.now()
    const load = (slot: Slot) => slot.runs.size + slot.checks.size
    const inCall = (slot: Slot) => (slot.beat[BEAT_SINCE] === 0 ? 0 : now - slot.beat[BEAT_SINCE]!)
    const held = (slot: Slot) => inCall(slot) > HOT_MS || now - slot.beat[BEAT_HOG]! < HOG_MS
    const free = live.filter((slot) => !held(slot))
    const idle = free.filter((slot) => inCall(slot) <= BUSY_MS)
    const candidates = idle.length > 0 ? idle : free.length > 0 ? free : live
    const best = candidates.reduce<Slot | undefined>((b, slot) => (b === undefined || load(slot) < load(b) ? slot : b), undefined)
    const full = free.length > 0 ? live.length >= size : live.length >= this.size * 2
    if (best && (load(best) === 0 || full)) return best
    const slot = this.spawn(quarantine)
    this.slots.push(slot)
    // The new worker serves what comes next. A started worker that is not inside a QuickJS call right
    // now (its runs wait on host calls) takes this run at once instead of making it wait for a start.
    if (best?.started && best.beat[BEAT_SINCE] === 0) return best
    return slot
  }

  /** Waits for the worker to start; a worker that fails to start is dropped and the error reported. */
  private async ready(slot: Slot): Promise<void> {
    try {
      await Promise.race([slot.ready, this.closing])
    } catch (err) {
      if (this.closed) throw new SandboxError('crashed', 'The sandbox is closing')
      this.replace(slot, 'crashed', `The sandbox worker failed to start: ${(err as Error).message}`)
      throw new SandboxError('crashed', `The sandbox worker failed to start: ${(err as Error).message}`)
    }
  }

  async check(code: string): Promise<CheckResult> {
    if (this.closed) throw new SandboxError('crashed', 'The sandbox is closed')
    const slot = this.leastBusy(false)
    await this.ready(slot)
    const id = this.nextId++
    const limits = this.limits
    return new Promise((resolve) => {
      const watchdog = setTimeout(() => this.stopStuck(slot, id, 'Loading the bot code took too long'), limits.budgetMs + STUCK_GRACE_MS)
      slot.checks.set(id, { code, resolve, watchdog })
      this.startWatch()
      slot.worker.postMessage({ type: 'check', id, code, limits } satisfies ToWorker)
    })
  }

  run(request: SandboxRun, host: SandboxHost): Promise<string> {
    return this.dispatch(request, host, 0, 0)
  }

  private async dispatch(request: SandboxRun, host: SandboxHost, moves: number, evacuations: number, startFailures = 0): Promise<string> {
    if (this.closed) throw new SandboxError('crashed', 'The sandbox is closed')
    const slot = this.leastBusy(this.isSuspect(request.botId))
    let failure: unknown
    try {
      await this.ready(slot)
      if (!this.slots.includes(slot) || slot.retiring) failure = new SandboxError('crashed', 'The sandbox worker was stopped before the run could start')
    } catch (err) {
      failure = err
    }
    if (failure !== undefined) {
      // Not the run's doing: it goes to another worker (a fresh one is started in its place).
      if (this.closed || startFailures + 1 >= MAX_START_FAILURES) throw failure
      return this.dispatch(request, host, moves, evacuations, startFailures + 1)
    }
    const id = this.nextId++
    const { limits } = request
    return new Promise((resolve, reject) => {
      const watchdog = setTimeout(() => this.stopStuck(slot, id, 'The bot code stopped responding and was terminated'), limits.timeoutMs + STUCK_GRACE_MS)
      slot.runs.set(id, { request, host, resolve, reject, watchdog, moves, evacuations })
      this.startWatch()
      slot.worker.postMessage({
        type: 'run', id, botKey: `${request.botId}@${request.version}`, code: request.code, entry: request.entry, input: request.input, limits,
      } satisfies ToWorker)
    })
  }

  registerMetrics(metrics: MetricsRegistry): void {
    metrics.collect('parley_sandbox_workers', 'Worker threads running bot code (quarantine workers excluded)', () => this.live(false).length)
    metrics.collect('parley_sandbox_quarantine_workers', 'Worker threads running only quarantined bots\' code', () => this.live(true).length)
    metrics.collect('parley_sandbox_quarantined_bots', 'Bots whose code runs on the quarantine workers now (it recently hit a limit)', () => {
      const now = Date.now()
      return [...this.suspects.values()].filter((until) => until > now).length
    })
    metrics.collect('parley_sandbox_workers_retired', 'Workers stopped and replaced since the start (stuck, out of memory, crashed)', () => this.retired, 'counter')
    metrics.collect('parley_sandbox_runs_evacuated', 'Runs moved off a held worker to another since the start', () => this.evacuated, 'counter')
    metrics.collect('parley_sandbox_heap_bytes', 'WebAssembly heaps of the workers together (those being stopped included), in bytes', () => this.heap.bytes)
  }

  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.watch)
    this.signalClosing(new SandboxError('crashed', 'The sandbox is closing'))
    await Promise.all(
      [...this.slots].map(async (slot) => {
        slot.worker.removeAllListeners('exit')
        slot.worker.removeAllListeners('error')
        for (const run of slot.runs.values()) {
          clearTimeout(run.watchdog)
          run.reject(new SandboxError('crashed', 'The sandbox is closing'))
        }
        for (const check of slot.checks.values()) clearTimeout(check.watchdog)
        await slot.worker.terminate()
        this.heap.release(slot.beat[BEAT_HEAP]!)
      }),
    )
    this.slots.length = 0
  }
}
