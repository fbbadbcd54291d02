/**
 * The sandbox pool's workers (slots): started on first use, chosen for each run or check, retired,
 * dropped and replaced. What happens to the work on a worker that is stopped is the watchdog's
 * (quickjs-watchdog.ts); what the workers say goes to the pool (quickjs-sandbox.ts).
 */
import { Worker } from 'node:worker_threads'
import { BEAT_HEAP, BEAT_HOG, BEAT_SINCE, BEAT_SLOTS, type FromWorker, type WorkerOptions } from './quickjs-protocol.js'
import { SandboxError, type CheckResult, type SandboxHost, type SandboxRun } from './sandbox.js'
import { PoolHeap, type HeapSizes } from './sandbox-heap.js'

/**
 * New work avoids a worker inside one QuickJS call for longer than this, when another is free (an
 * ordinary call takes well under a millisecond: one this long may be about to hold the worker).
 */
const BUSY_MS = 10
/**
 * A worker inside one QuickJS call for longer than this is held: no run can go on there until the call
 * ends (QuickJS cannot be preempted), so the other runs on it are evacuated (see Watchdog.evacuate()).
 */
export const HOT_MS = 50
/**
 * Nor does a worker where one VM ran promise jobs for a whole drain slice within this long: code that
 * burns CPU in short steps (a promise or microtask loop, drained in slices) would otherwise delay every
 * run sent there. Ordinary turns never fill a slice.
 */
export const HOG_MS = 100
/**
 * OS priority (nice) of quarantine workers. 0, the same as every other thread: hook budgets are wall time,
 * so a lowered priority made a suspect bot's turns starve past their budget whenever the machine was busy
 * (at nice 19, and still at nice 10 under a load of 12 on 2 cores): each turn then failed, which kept the bot
 * suspect, and the bot stopped working until the load went down. Quarantine still keeps its runs on workers
 * of their own, so its next attack holds no other bot's worker.
 */
const QUARANTINE_NICE = 0
/**
 * A worker that has not said it is ready this long after it was started is presumed stuck and replaced
 * (a cold start on a loaded 2-core machine took up to 5 s under tsx). Nothing may wait on a worker forever.
 */
const START_TIMEOUT_MS = 30_000

export interface PendingRun {
  request: SandboxRun
  host: SandboxHost
  resolve(output: string): void
  reject(err: Error): void
  watchdog: NodeJS.Timeout
  moves: number
  evacuations: number
}

export interface PendingCheck {
  code: string
  resolve(result: CheckResult): void
  watchdog: NodeJS.Timeout
}

export interface Slot {
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
  /** Runs only suspects' code (see SUSPECT_MS in quickjs-watchdog.ts), at a low OS priority. */
  quarantine: boolean
}

export interface SlotsOptions {
  /** Ordinary workers (the quarantine's one comes besides). */
  size: number
  heapSizes: HeapSizes
  startTimeoutMs: number | undefined
  /** The client methods the prelude passes to the host as they are (WorkerOptions.methods). */
  methods: readonly string[]
  /** Starts the worker thread running QuickJS. */
  createWorker(workerData: WorkerOptions): Worker
  /** A message from a started worker. */
  onMessage(slot: Slot, message: FromWorker): void
  /** The worker crashed or exited. */
  onCrash(slot: Slot, message: string): void
}

/** The pool's workers: the ordinary ones and the quarantine's. */
export class WorkerSlots {
  /** Every worker started and not dropped (retiring ones included). */
  readonly all: Slot[] = []
  readonly size: number
  closed = false
  /** Workers retired so far (metrics). */
  retired = 0

  /** What all the workers' heaps hold together. */
  readonly heap = new PoolHeap()

  constructor(private readonly options: SlotsOptions) {
    this.size = options.size
  }

  private spawn(quarantine = false): Slot {
    const shared = new SharedArrayBuffer(BEAT_SLOTS * Float64Array.BYTES_PER_ELEMENT)
    const beat = new Float64Array(shared)
    const workerData: WorkerOptions = {
      beat: shared, pool: this.heap.shared, ...this.options.heapSizes, nice: quarantine ? QUARANTINE_NICE : 0, methods: this.options.methods,
    }
    const worker = this.options.createWorker(workerData)
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
    worker.on('message', (message: FromWorker) => this.options.onMessage(slot, message))
    worker.on('error', () => this.options.onCrash(slot, 'The sandbox worker crashed'))
    worker.on('exit', () => this.options.onCrash(slot, 'The sandbox worker exited'))
    return slot
  }

  /** Fails everything the slot was doing and drops it; the next request starts a fresh worker. */
  private replace(slot: Slot, kind: 'crashed' | 'timeout', message: string): void {
    if (!this.drop(slot)) return
    for (const run of slot.runs.values()) run.reject(new SandboxError(kind, message))
    for (const check of slot.checks.values()) check.resolve({ ok: false, error: message })
  }

  /**
   * Keeps the ordinary pool at its size and one quarantine worker ready, after a worker was dropped or
   * retired (a suspect's next run must not wait for a worker to start, nor run among other bots').
   */
  replenish(): void {
    if (this.closed || this.all.length === 0) return
    if (this.live(false).length < this.size) this.all.push(this.spawn())
    if (this.live(true).length === 0) this.all.push(this.spawn(true))
  }

  /** Terminates a slot's worker and forgets it (its pending work stays in its maps); false if already dropped. */
  drop(slot: Slot): boolean {
    const index = this.all.indexOf(slot)
    if (index === -1) return false
    this.all.splice(index, 1)
    for (const run of slot.runs.values()) clearTimeout(run.watchdog)
    for (const check of slot.checks.values()) clearTimeout(check.watchdog)
    slot.abortStart(new Error('it was stopped before it was ready'))
    slot.worker.removeAllListeners('exit')
    // Its heap counts against the pool's budget until the thread is gone (and its memory with it).
    void slot.worker.terminate().finally(() => this.heap.release(slot.beat[BEAT_HEAP]!))
    return true
  }

  /**
   * A worker asked to be retired (its heap grew, or it holds VMs abandoned after a limit): it takes no
   * new work, a fresh worker takes its place, and it is terminated as soon as its runs are over.
   */
  retire(slot: Slot): void {
    if (slot.retiring || !this.all.includes(slot)) return
    slot.retiring = true
    this.retired++
    this.replenish()
    this.settled(slot)
  }

  /**
   * A run or check on the slot is over: a retiring worker with nothing left is terminated, and so are the workers
   * started while the others were held (see leastBusy) once they are idle and the others free again: each holds a
   * thread and a heap, and the pool goes back to its size.
   */
  settled(slot: Slot): void {
    if (slot.retiring && !this.busy(slot)) this.drop(slot)
    const now = Date.now()
    for (const quarantine of [false, true]) {
      const live = this.live(quarantine)
      let free = live.filter((s) => !this.held(s, now)).length
      // the largest heaps first
      for (const idle of live.filter((s) => s.started && !this.busy(s)).sort((a, b) => b.beat[BEAT_HEAP]! - a.beat[BEAT_HEAP]!)) {
        if (free <= this.sizeOf(quarantine)) break
        // (an idle worker that drained promise jobs a moment ago counts as held, not free: dropping it leaves `free` as it is)
        if (!this.held(idle, now)) free--
        this.drop(idle)
      }
    }
  }

  private busy(slot: Slot): boolean {
    return slot.runs.size + slot.checks.size > 0
  }

  /** Ordinary workers the pool keeps, or the quarantine's. */
  private sizeOf(quarantine: boolean): number {
    return quarantine ? 1 : this.size
  }

  /** Inside one long QuickJS call, or hogging its thread with promise jobs: work sent there would wait. */
  private held(slot: Slot, now: number): boolean {
    const inCall = slot.beat[BEAT_SINCE] === 0 ? 0 : now - slot.beat[BEAT_SINCE]!
    return inCall > HOT_MS || now - slot.beat[BEAT_HOG]! < HOG_MS
  }

  /** The slots taking new work: the ordinary pool, or the quarantine's. */
  live(quarantine: boolean): Slot[] {
    return this.all.filter((slot) => !slot.retiring && slot.quarantine === quarantine)
  }

  /**
   * The least busy worker that is not held inside one long QuickJS call (work sent there would wait
   * behind it, and be moved if that call turns out stuck). When every worker is held, one more is
   * started (up to twice the pool size, or two for the quarantine: held workers end at their run's deadline, and settled() stops those started besides once they are idle).
   */
  leastBusy(quarantine: boolean): Slot {
    // The whole pool starts on first use: a worker started only when a second run comes along makes
    // that run wait for its start (QuickJS's WebAssembly and the prelude), longer than a busy turn
    // would have held it on the first worker. The quarantine's one worker starts with them, so that a
    // suspect's next run never waits for one to start.
    const size = this.sizeOf(quarantine)
    if (this.all.length === 0) {
      for (let i = 0; i < this.size; i++) this.all.push(this.spawn())
      this.all.push(this.spawn(true))
    }
    let live = this.live(quarantine)
    if (live.length === 0) {
      this.all.push(this.spawn(quarantine))
      live = this.live(quarantine)
    }
    const now = Date.now()
    const load = (slot: Slot) => slot.runs.size + slot.checks.size
    const inCall = (slot: Slot) => (slot.beat[BEAT_SINCE] === 0 ? 0 : now - slot.beat[BEAT_SINCE]!)
    const free = live.filter((slot) => !this.held(slot, now))
    const idle = free.filter((slot) => inCall(slot) <= BUSY_MS)
    const candidates = idle.length > 0 ? idle : free.length > 0 ? free : live
    const best = candidates.reduce<Slot | undefined>((b, slot) => (b === undefined || load(slot) < load(b) ? slot : b), undefined)
    const full = free.length > 0 ? live.length >= size : live.length >= size * 2
    if (best && (load(best) === 0 || full)) return best
    const slot = this.spawn(quarantine)
    this.all.push(slot)
    // The new worker serves what comes next. A started worker that is not inside a QuickJS call right
    // now (its runs wait on host calls) takes this run at once instead of making it wait for a start.
    if (best?.started && best.beat[BEAT_SINCE] === 0) return best
    return slot
  }

  /**
   * Waits for the worker to start; a worker that fails to start is dropped and the error reported. Only the slot's
   * own promise is awaited: close() fails it (abortStart) for a worker still starting. (A race against a promise
   * that lives as long as the pool left a reaction on it for every run, until the pool closed.)
   */
  async ready(slot: Slot): Promise<void> {
    if (slot.started) return
    try {
      await slot.ready
    } catch (err) {
      if (this.closed) throw new SandboxError('crashed', 'The sandbox is closing')
      this.replace(slot, 'crashed', `The sandbox worker failed to start: ${(err as Error).message}`)
      throw new SandboxError('crashed', `The sandbox worker failed to start: ${(err as Error).message}`)
    }
  }


  /** Stops every worker: what was in flight fails, and nothing waits on a worker any more. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.all(
      [...this.all].map(async (slot) => {
        // Runs waiting for this worker to start fail now (ready() above), not when the start times out.
        slot.abortStart(new SandboxError('crashed', 'The sandbox is closing'))
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
    this.all.length = 0
  }
}
