/**
 * What the sandbox pool does about bot code that holds a worker: per-run watchdog timers and a watch of the
 * workers' heartbeats; a stuck worker stopped, the runs there moved to another (bystanders) or failed (the
 * culprit), runs evacuated off a held worker, and bots that reached a limit quarantined.
 */
import { BEAT_DEADLINE, BEAT_HOG, BEAT_HOG_RUN, BEAT_RUN, BEAT_SINCE } from './quickjs-protocol.js'
import { HOG_MS, HOT_MS, type PendingRun, type Slot, type WorkerSlots } from './quickjs-slots.js'
import { SandboxError, type CheckResult, type SandboxHost, type SandboxRun } from './sandbox.js'

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
 * A bot whose code was stopped at a time or memory limit (the run failed, or its code was interrupted
 * or ran out of memory and the prelude went on), or left promise jobs running, is a suspect for this long: its runs go to the quarantine workers (low OS
 * priority, never shared with other bots' runs).
 */
const SUSPECT_MS = 10 * 60_000
/** Evacuations a run may go through (it is never their cause); crashes and stops count in MAX_MOVES. */
const MAX_EVACUATIONS = 10
/** A run is moved to a fresh worker at most this many times when its worker is stopped for another run. */
export const MAX_MOVES = 2

/** How the pool starts work again on another worker. */
export interface Restart {
  dispatch(request: SandboxRun, host: SandboxHost, moves: number, evacuations: number): Promise<string>
  check(code: string): Promise<CheckResult>
}

export class Watchdog {
  private watch: NodeJS.Timeout | undefined
  /** Runs moved off a held worker (metrics). */
  evacuated = 0
  private readonly suspects = new Map<string, number>()

  constructor(private readonly slots: WorkerSlots, private readonly restart: Restart) {}

  /** A timer that stops the slot's worker as stuck (see stopStuck) once `limitMs` and a grace have passed. */
  arm(slot: Slot, id: number, limitMs: number, message: string): NodeJS.Timeout {
    return setTimeout(() => this.stopStuck(slot, id, message), limitMs + STUCK_GRACE_MS)
  }

  /**
   * A worker that died (QuickJS aborted, typically while freeing a VM its run left mid-job, after
   * that run was answered): the runs still in flight there start again on another worker, each at
   * most MAX_MOVES times (a run that itself kills its worker fails in the end).
   */
  crashed(slot: Slot, message: string): void {
    if (!this.slots.drop(slot)) return
    this.slots.replenish()
    for (const run of slot.runs.values()) {
      if (run.moves >= MAX_MOVES || this.slots.closed) run.reject(new SandboxError('crashed', message))
      else this.move(run)
    }
    for (const check of slot.checks.values()) check.resolve({ ok: false, error: message })
  }

  /** Starts a run again from the beginning on another worker; its logs say so (its host calls so far are repeated). */
  move(run: PendingRun): void {
    run.host.log('warn', 'This run was restarted from the beginning on a fresh sandbox worker: the one it ran on was stopped (held by other code)')
    run.host.restarted?.()
    this.restart.dispatch(run.request, run.host, run.moves + 1, run.evacuations).then(run.resolve, run.reject)
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
      this.restart.dispatch(run.request, run.host, run.moves, run.evacuations + 1).then(run.resolve, run.reject)
    }
    for (const [id, check] of [...slot.checks]) {
      if (id === culprit) continue
      slot.checks.delete(id)
      clearTimeout(check.watchdog)
      this.restart.check(check.code).then(check.resolve, (err: Error) => check.resolve({ ok: false, error: err.message }))
    }
  }

  /** Runs of this bot go to the quarantine workers for SUSPECT_MS. */
  suspect(botId: string): void {
    this.suspects.set(botId, Date.now() + SUSPECT_MS)
  }

  isSuspect(botId: string): boolean {
    const until = this.suspects.get(botId)
    if (until === undefined) return false
    if (until > Date.now()) return true
    this.suspects.delete(botId)
    return false
  }

  /** Bots whose runs go to the quarantine workers now (metrics). */
  get quarantined(): number {
    const now = Date.now()
    return [...this.suspects.values()].filter((until) => until > now).length
  }

  /**
   * Stops a worker held by one run (`culprit`: a run id, or a check id) that overran its limits: the
   * culprit fails with a timeout; the other runs and checks that were on the worker (bystanders,
   * possibly of other bots) start again from the beginning on another worker. A moved run repeats its
   * host calls up to that point: the bot runtime's replies have deterministic ids, so a user never
   * gets one twice (as after a crash).
   */
  stopStuck(slot: Slot, culprit: number, message: string): void {
    if (!this.slots.drop(slot)) return
    this.slots.replenish()
    const held = slot.runs.get(culprit)
    if (held) this.suspect(held.request.botId)
    for (const [id, run] of slot.runs) {
      if (id === culprit || run.moves >= MAX_MOVES) run.reject(new SandboxError('timeout', message))
      else this.move(run)
    }
    for (const [id, check] of slot.checks) {
      if (id === culprit) check.resolve({ ok: false, error: message })
      else this.restart.check(check.code).then(check.resolve, (err: Error) => check.resolve({ ok: false, error: err.message }))
    }
  }

  /** Reads the heartbeats: a worker inside one QuickJS call well past that call's deadline is stopped. */
  private watchHeartbeats(): void {
    const now = Date.now()
    let busy = false
    for (const slot of [...this.slots.all]) {
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

  /** Reads the heartbeats every WATCH_MS while work is in flight. */
  start(): void {
    if (this.watch) return
    this.watch = setInterval(() => this.watchHeartbeats(), WATCH_MS)
    this.watch.unref()
  }

  stop(): void {
    clearInterval(this.watch)
  }
}
