/**
 * What a sandbox worker thread's modules share (loaded in the worker only, see quickjs-worker.ts): the thread's
 * link to the pool, its heartbeat, its heap and what each VM's calls are charged with, and the shape of a VM.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten'
import { BEAT_DEADLINE, BEAT_HEAP, BEAT_RUN, BEAT_SINCE, type FromWorker, type WorkerOptions } from './quickjs-protocol.js'
import { workerHeap, type HeapAccount } from './sandbox-heap.js'
import type { SandboxFailure, SandboxLimits } from './sandbox.js'

/** The link to the pool: messages both ways (see quickjs-protocol.ts). */
export const port = parentPort!
export const post = (message: FromWorker) => port.postMessage(message)

/**
 * The heartbeat shared with the pool (see BEAT in quickjs-protocol.ts): while this thread is inside a
 * QuickJS call it says since when, until when the call may run, and for which run. The pool reads it
 * without this thread's help, so it sees a call that overran its deadline even when QuickJS does not
 * poll its interrupt handler (a few polls in seconds for code whose each step is a long native
 * operation, such as filling large arrays near the memory limit).
 */
export const options = workerData as WorkerOptions
export const beat = new Float64Array(options.beat)

// A quarantine worker lowers its own thread's OS priority (Linux: a thread id names one thread for
// setpriority), so that suspect bot code gets the CPU only when the server and other bots leave it.
if (options.nice > 0) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), options.nice)
  } catch {
    // not Linux, or not allowed: the priority is left as it is
  }
}

/**
 * The WebAssembly heap every VM of this worker allocates from (see sandbox-heap.ts): it only ever grows
 * (WebAssembly memories cannot shrink), a run may grow it by at most its bot's memory limit, the worker's heap
 * is capped and so are all the pool's heaps together. A worker whose heap has grown is retired: terminating it
 * gives the whole heap back.
 */
const heap = workerHeap(options, beat, BEAT_HEAP)
export const { memory } = heap
const poolBytesHeld = heap.poolBytes
/** The heap's size when the worker started, and the room allowed per idle VM it keeps (retireIfGrown). */
const START_BYTES = memory.buffer.byteLength
const IDLE_VM_ALLOWANCE = 512 * 1024
/** A VM whose run grew the heap by less than this did not exhaust it (a bystander). */
const BYSTANDER_GROWTH = 16 * 1024 * 1024

/** The run a VM is serving: the promise its entry returned, and who waits for it to settle. */
export interface CurrentRun {
  promise: QuickJSHandle
  settle(outcome: { ok: true; output: string } | { ok: false; error: string }): void
}

export interface Vm {
  runtime: QuickJSRuntime
  context: QuickJSContext
  api: QuickJSHandle
  /** The prelude's entry points and the settle function of host calls (properties of SETUP's value, `api`). */
  entries: { turn: QuickJSHandle; beforeIncoming: QuickJSHandle; action: QuickJSHandle; settle: QuickJSHandle; abortUnit: QuickJSHandle }
  current: CurrentRun | undefined
  /** End of the current unit of user code (a hook, action or card), set through host.budget. */
  deadline: number
  /** End of the whole run: no budget call can reach past it. */
  runDeadline: number
  maxBudgetMs: number
  /** The run currently using this VM; host calls and logs are attributed to it. */
  runId: number
  broken: boolean
  /** A drain slice is scheduled on the event loop. */
  drainScheduled: boolean
  /** What this VM's calls grew the worker's heap by during the current run, against the bot's memory limit. */
  heap: HeapAccount
  /** Code of the current run was interrupted, or a unit of it ended, at its time limit. */
  interrupted: boolean
  /** Units of the current run ended by abortUnit. */
  aborts: number
  /** The current run is to be ended (a limit was reached where no unit could be ended instead). */
  ended: 'timeout' | 'memory' | undefined
}

/** Runs one synchronous QuickJS call, flagged in the heartbeat; the heap's growth is charged to the VM's run. */
export function inVm<T>(vm: Vm, fn: () => T): T {
  const charged = heap.account
  heap.account = vm.heap
  beat[BEAT_RUN] = vm.runId
  beat[BEAT_DEADLINE] = Math.min(vm.deadline, vm.runDeadline)
  beat[BEAT_SINCE] = Date.now()
  try {
    return fn()
  } finally {
    beat[BEAT_SINCE] = 0
    heap.account = charged
  }
}

/**
 * The VM ran out of memory because the worker's heap or the pool's were exhausted, not at its own limit: with
 * `bystander`, not by its own doing either (it barely grew the heap).
 */
export function exhausted(vm: Vm, bystander = false): boolean {
  const { refused, grew } = vm.heap
  return (refused === 'worker' || refused === 'pool') && (!bystander || grew < BYSTANDER_GROWTH)
}

/**
 * The run grew the heap by more than a bystander's share and was refused more: it ran out of memory (at its own
 * limit, the worker's or the pool's) and its code or the prelude caught the error.
 */
export function ranOutOfMemory(vm: Vm): boolean {
  return vm.heap.refused !== undefined && vm.heap.grew >= BYSTANDER_GROWTH
}

/**
 * After a run: what it allocated stays resident in the heap (WebAssembly memories never shrink, nor does QuickJS's
 * allocator give pages back): a worker whose heap one run grew by half a bot's limit, or ran out of memory in, or
 * that has grown past the recycle size, is replaced, and its memory given back.
 */
export function retireIfGrown(vm: Vm, limits: SandboxLimits, idleVms: number): void {
  const bytes = memory.buffer.byteLength
  const mb = Math.round(bytes / 1048576)
  if (bytes > options.recycleBytes || vm.heap.grew > limits.memoryBytes / 2) return retire(`its heap grew to ${mb} MB`)
  if (ranOutOfMemory(vm)) return retire(`a run ran out of memory (its heap grew to ${mb} MB)`)
  // What the worker holds besides the heap it started with: its idle VMs (~0.3 MB each). Beyond that the heap is
  // mostly free space, given back once it passes half a bot's limit, or only a bystander's growth while the pool's
  // heaps together hold more than half their budget (several runs at once, each refused at the pool's budget
  // before growing its worker's heap by much, left every worker holding some of it).
  const holds = START_BYTES + idleVms * IDLE_VM_ALLOWANCE
  if (bytes > holds + limits.memoryBytes / 2) return retire(`its heap grew to ${mb} MB, mostly free`)
  if (bytes > holds + BYSTANDER_GROWTH && poolBytesHeld() > options.poolBytes / 2) retire(`its heap grew to ${mb} MB, mostly free, while the pool's heaps hold more than half their budget`)
}

let retiring: 'no' | 'later' | 'now' = 'no'
/**
 * Asks the pool to retire this worker: it takes no new work and is terminated once its runs and checks
 * are over, which frees its whole heap (abandoned VMs included); runs still here finish normally.
 * `now`: the heap is exhausted and held by an abandoned VM, so the other runs here would run out of
 * memory: the pool terminates this worker at once and starts them again on another.
 */
export function retire(reason: string, now = false): void {
  if (retiring === 'now' || (retiring === 'later' && !now)) return
  retiring = now ? 'now' : 'later'
  post({ type: 'retire', reason, ...(now && { now }) })
}

/** The text of an error thrown in a VM: its name, message and where in the bot's code. */
export function errorText(context: QuickJSContext, handle: QuickJSHandle): string {
  const value = context.dump(handle) as { name?: string; message?: string; stack?: string; lineNumber?: number } | string
  if (typeof value !== 'object' || value === null) return String(value)
  const where = /(bot\.js:\d+(?::\d+)?)/.exec(value.stack ?? '')?.[1]
  return `${value.name ?? 'Error'}: ${value.message ?? ''}${where ? ` (${where})` : ''}`
}

export function classify(message: string): SandboxFailure {
  if (/interrupted/.test(message)) return 'timeout'
  if (/out of memory/.test(message)) return 'memory'
  return 'error'
}
