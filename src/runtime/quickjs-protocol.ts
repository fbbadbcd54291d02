/**
 * What the sandbox pool (quickjs-sandbox.ts) and its worker threads (quickjs-worker.ts) share: the messages
 * between them, what a worker is started with, and the layout of a worker's heartbeat. Both sides import it;
 * it imports neither.
 */
import type { LogLevel } from './prelude-contract.js'
import type { HeapSizes } from './sandbox-heap.js'
import type { SandboxFailure, SandboxLimits } from './sandbox.js'

export type ToWorker =
  | { type: 'check'; id: number; code: string; limits: SandboxLimits }
  | { type: 'run'; id: number; botKey: string; code: string; entry: 'turn' | 'beforeIncoming' | 'action'; input: string; limits: SandboxLimits }
  | { type: 'hostResult'; id: number; callId: number; ok: boolean; value: string }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'checked'; id: number; ok: boolean; summary?: string; error?: string }
  | { type: 'hostCall'; id: number; callId: number; method: string; args: string }
  | { type: 'log'; id: number; level: LogLevel; text: string }
  /**
   * `retry`: the run failed only because another run on this worker exhausted the shared heap (it is
   * a bystander): the pool starts it again on another worker. `limited`: the run went on (the prelude
   * caught it) after some of its code was interrupted at its time limit.
   */
  | { type: 'done'; id: number; ok: boolean; output?: string; kind?: SandboxFailure; error?: string; retry?: boolean; limited?: boolean }
  /**
   * This worker should take no new work and be terminated once its runs are over (see retire()); with
   * `now`, at once, its other runs started again elsewhere (its heap is exhausted: they would fail).
   */
  | { type: 'retire'; reason: string; now?: boolean }

/**
 * Heartbeat of a worker, a Float64Array over a SharedArrayBuffer written by the worker: since when
 * it is inside a QuickJS call (0: it is not), that call's deadline, and the run it belongs to.
 */
export const BEAT_SINCE = 0
export const BEAT_DEADLINE = 1
export const BEAT_RUN = 2
/** The size of the worker's WebAssembly heap, in bytes. */
export const BEAT_HEAP = 3
/** When one VM last ran promise jobs for a whole drain slice (it still had more), and that VM's run. */
export const BEAT_HOG = 4
export const BEAT_HOG_RUN = 5
export const BEAT_SLOTS = 6

/** What a worker is started with (its workerData). */
export interface WorkerOptions extends HeapSizes {
  beat: SharedArrayBuffer
  /** The pages all the pool's heaps hold (see PoolHeap). */
  pool: SharedArrayBuffer
  /** OS priority (nice) the worker thread sets for itself; 0 leaves it as it is. */
  nice: number
  /** The client methods the prelude passes to the host as they are (PreludeHelpers.methods). */
  methods: readonly string[]
}
