/**
 * A sandbox worker thread: hosts QuickJS (WebAssembly) virtual machines for bot code.
 * Bot code only ever runs inside QuickJS; this thread's own globals (process, require, fs…) are
 * unreachable from it. The only ways out are the three host functions installed below, which
 * forward JSON to the main thread.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten'
import { parleyPrelude } from './prelude.js'
import { previewOf } from './preview.js'
import { BEAT_DEADLINE, BEAT_HEAP, BEAT_HOG, BEAT_HOG_RUN, BEAT_RUN, BEAT_SINCE, type WorkerOptions } from './quickjs-sandbox.js'
import { workerHeap, type HeapAccount } from './sandbox-heap.js'
import type { LogLevel } from './prelude-contract.js'
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

const port = parentPort!
const post = (message: FromWorker) => port.postMessage(message)

/**
 * The heartbeat shared with the pool (see BEAT in quickjs-sandbox.ts): while this thread is inside a
 * QuickJS call it says since when, until when the call may run, and for which run. The pool reads it
 * without this thread's help, so it sees a call that overran its deadline even when QuickJS does not
 * poll its interrupt handler (a few polls in seconds for code whose each step is a long native
 * operation, such as filling large arrays near the memory limit).
 */
const options = workerData as WorkerOptions
const beat = new Float64Array(options.beat)

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
const { memory } = heap
/** A VM whose run grew the heap by less than this did not exhaust it (a bystander). */
const BYSTANDER_GROWTH = 16 * 1024 * 1024

/** Runs one synchronous QuickJS call, flagged in the heartbeat; the heap's growth is charged to the VM's run. */
function inVm<T>(vm: Vm, fn: () => T): T {
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

let retiring: 'no' | 'later' | 'now' = 'no'
/**
 * Asks the pool to retire this worker: it takes no new work and is terminated once its runs and checks
 * are over, which frees its whole heap (abandoned VMs included); runs still here finish normally.
 * `now`: the heap is exhausted and held by an abandoned VM, so the other runs here would run out of
 * memory: the pool terminates this worker at once and starts them again on another.
 */
function retire(reason: string, now = false): void {
  if (retiring === 'now' || (retiring === 'later' && !now)) return
  retiring = now ? 'now' : 'later'
  post({ type: 'retire', reason, ...(now && { now }) })
}

/** Deep recursion must hit QuickJS's own check before the host's stack (measured: 256 KB is safe). */
const MAX_STACK_BYTES = 256 * 1024
/**
 * Idle VMs kept per bot version. A new VM costs ~7 ms under load, so the pool covers a bot's usual
 * concurrency on one worker (its conversations' turns overlap while they wait on host calls).
 */
const IDLE_VMS_PER_BOT = 128
/**
 * Idle VMs kept by one worker over all bots. Each holds its own heap with the prelude and the bot
 * loaded: ~260 KB for a small bot (QuickJS's own count), so the cap is some 70 MB per worker.
 */
const MAX_IDLE_VMS = 256
/** A drain yields to the event loop after this long, so host results and other runs are not starved. */
const DRAIN_SLICE_MS = 5
/**
 * What may cross out of a VM, checked inside it before anything is copied out (a string copied out is held by
 * this thread's V8 heap, the message to the pool and the server's heap at once): a log line's characters, and a
 * host call's JSON arguments, at the body limits of the HTTP APIs the calls stand for (platform-api.md, Limits:
 * Tables 40 MB for table calls, Runtime 1 MB for every other).
 */
const MAX_LOG_LENGTH = 4000
const MAX_CALL_LENGTH = 1024 * 1024
const MAX_TABLE_CALL_LENGTH = 40 * 1024 * 1024

/**
 * Installs the prelude. Host calls wait on promises of this realm, kept in a table private to this
 * closure (no bot code can reach it); the worker settles them through the function SETUP evaluates
 * to. Cheaper than a host-made promise per call (quickjs-emscripten's newPromise allocates host
 * functions each time), measured ~14 µs a call.
 */
const SETUP = `(function () {
  var call = globalThis.__host_call, budget = globalThis.__host_budget, log = globalThis.__host_log;
  delete globalThis.__host_call; delete globalThis.__host_budget; delete globalThis.__host_log;
  var HostPromise = Promise, HostError = Error, waiting = Object.create(null);
  var __name = function (f) { return f };
  function text(args) {
    return args.map(function (a) {
      if (typeof a === 'string') return a;
      if (a instanceof Error) return a.name + ': ' + a.message;
      try { return JSON.stringify(a) } catch (e) { return String(a) }
    }).join(' ');
  }
  function logLine(level, message) { log(level, String(message).slice(0, ${MAX_LOG_LENGTH})) }
  var console = {};
  ['debug', 'info', 'warn', 'error'].forEach(function (level) { console[level] = function () { logLine(level, text([].slice.call(arguments))) } });
  console.log = console.info;
  Object.defineProperty(globalThis, 'console', { value: Object.freeze(console), writable: false, configurable: false });
  var host = Object.freeze({
    call: function (method, args) {
      var table = method.indexOf('Table') !== -1, most = table ? ${MAX_TABLE_CALL_LENGTH} : ${MAX_CALL_LENGTH};
      if (args.length > most) {
        return HostPromise.reject(new HostError('client.' + method + ': its arguments are too large (' + args.length + ' characters of JSON; the most is ' +
          most + ', the ' + (table ? 'Tables' : 'Runtime') + ' API body limit)'));
      }
      return new HostPromise(function (resolve, reject) { waiting[call(method, args)] = { resolve: resolve, reject: reject } })
    },
    budget: function (ms) { budget(ms) },
    log: logLine
  });
  // The prelude's entry points are handed to the worker only (SETUP's value): nothing global names them,
  // so bot code cannot re-enter the runtime (a re-entered turn would start units with fresh budgets).
  var api = (${parleyPrelude.toString()})(host, { previewOf: (${previewOf.toString()}) });
  return Object.freeze({
    load: api.load,
    turn: api.turn,
    beforeIncoming: api.beforeIncoming,
    action: api.action,
    abortUnit: api.abortUnit,
    settle: function settle(id, ok, value) {
      var entry = waiting[id];
      if (entry === undefined) return;
      delete waiting[id];
      if (ok) entry.resolve(value); else entry.reject(new HostError(value));
    },
  });
})()`

/** The run a VM is serving: the promise its entry returned, and who waits for it to settle. */
interface CurrentRun {
  promise: QuickJSHandle
  settle(outcome: { ok: true; output: string } | { ok: false; error: string }): void
}

interface Vm {
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

const QuickJS = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory }))
const idle = new Map<string, Vm[]>()
let idleCount = 0
let nextCallId = 1
/** Host calls in flight, by call id: the VM that made them (which settles them in its own realm). */
const hostCalls = new Map<number, Vm>()

function errorText(context: QuickJSContext, handle: QuickJSHandle): string {
  const value = context.dump(handle) as { name?: string; message?: string; stack?: string; lineNumber?: number } | string
  if (typeof value !== 'object' || value === null) return String(value)
  const where = /(bot\.js:\d+(?::\d+)?)/.exec(value.stack ?? '')?.[1]
  return `${value.name ?? 'Error'}: ${value.message ?? ''}${where ? ` (${where})` : ''}`
}

function classify(message: string): SandboxFailure {
  if (/interrupted/.test(message)) return 'timeout'
  if (/out of memory/.test(message)) return 'memory'
  return 'error'
}

function forgetHostCalls(vm: Vm): void {
  for (const [callId, owner] of hostCalls) if (owner === vm) hostCalls.delete(callId)
}

/**
 * A VM whose code was interrupted or ran out of memory is never freed in place: freeing a runtime
 * stopped mid-job trips QuickJS's leak assertion (`list_empty(&rt->gc_obj_list)`), which aborts the
 * whole WebAssembly module and every other run on this worker. It is dropped as it is and the worker
 * retired, so the memory it holds goes back with the worker's heap.
 */
function abandonVm(vm: Vm, reason: string, now = false): void {
  vm.broken = true
  forgetHostCalls(vm)
  vm.current = undefined
  retire(reason, now)
}

/**
 * The VM ran out of memory because the worker's heap or the pool's were exhausted, not at its own limit: with
 * `bystander`, not by its own doing either (it barely grew the heap).
 */
function exhausted(vm: Vm, bystander = false): boolean {
  const { refused, grew } = vm.heap
  return (refused === 'worker' || refused === 'pool') && (!bystander || grew < BYSTANDER_GROWTH)
}

function disposeVm(vm: Vm): void {
  vm.broken = true
  try {
    forgetHostCalls(vm)
    // Every handle into the VM is freed first, or freeing the runtime trips QuickJS's leak assertion
    // and aborts the whole WebAssembly module.
    vm.current?.promise.dispose()
    vm.current = undefined
    if (vm.entries) for (const handle of Object.values(vm.entries)) handle.dispose()
    vm.api?.dispose()
    vm.context.dispose()
    vm.runtime.dispose()
  } catch (err) {
    // An aborted WebAssembly module cannot run anything any more: let the pool start a fresh worker.
    if (/Abort/i.test(String((err as Error)?.message ?? err))) process.exit(1)
  }
}

/** A fresh VM with the prelude and the bot's module loaded. Throws the load error's text. */
function createVm(code: string, limits: SandboxLimits, runId: number): { vm: Vm; summary: string } {
  const runtime = QuickJS.newRuntime()
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(MAX_STACK_BYTES)
  const vm: Vm = {
    runtime, context: runtime.newContext(), api: undefined as never, entries: undefined as never, current: undefined, deadline: Date.now() + limits.budgetMs,
    runDeadline: Date.now() + limits.timeoutMs, maxBudgetMs: limits.budgetMs, runId, broken: false, drainScheduled: false,
    heap: { grew: 0, limitBytes: limits.memoryBytes, refused: undefined }, interrupted: false, aborts: 0, ended: undefined,
  }
  return inVm(vm, () => loadVm(vm, code))
}

function loadVm(vm: Vm, code: string): { vm: Vm; summary: string } {
  const { runtime } = vm
  runtime.setInterruptHandler(() => {
    if (Date.now() <= vm.deadline) return false
    vm.interrupted = true
    return true
  })
  const { context } = vm
  try {
    const hostCall = context.newFunction('__host_call', (methodHandle, argsHandle) => {
      const method = context.getString(methodHandle)
      const args = context.getString(argsHandle)
      const callId = nextCallId++
      hostCalls.set(callId, vm)
      post({ type: 'hostCall', id: vm.runId, callId, method, args })
      return context.newNumber(callId)
    })
    const budget = context.newFunction('__host_budget', (msHandle) => {
      const ms = Math.max(1, Math.min(vm.maxBudgetMs, Number(context.getNumber(msHandle)) || vm.maxBudgetMs))
      // Budgets only ever shorten the run: code that re-enters the runtime cannot buy itself more time.
      vm.deadline = Math.min(Date.now() + ms, vm.runDeadline)
      beat[BEAT_DEADLINE] = vm.deadline
    })
    const log = context.newFunction('__host_log', (levelHandle, textHandle) => {
      const level = context.getString(levelHandle) as LogLevel
      // Cut in the VM already (SETUP's logLine), before it was copied out.
      const text = context.getString(textHandle).slice(0, MAX_LOG_LENGTH)
      post({ type: 'log', id: vm.runId, level: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info', text })
    })
    for (const [name, fn] of [['__host_call', hostCall], ['__host_budget', budget], ['__host_log', log]] as const) {
      context.setProp(context.global, name, fn)
      fn.dispose()
    }
    vm.api = context.unwrapResult(context.evalCode(SETUP, 'parley-prelude.js', { type: 'global' }))
    vm.entries = {
      turn: context.getProp(vm.api, 'turn'),
      beforeIncoming: context.getProp(vm.api, 'beforeIncoming'),
      action: context.getProp(vm.api, 'action'),
      settle: context.getProp(vm.api, 'settle'),
      abortUnit: context.getProp(vm.api, 'abortUnit'),
    }

    const loaded = context.evalCode(code, 'bot.js', { type: 'module' })
    if (loaded.error) {
      const message = errorText(context, loaded.error)
      loaded.error.dispose()
      throw new Error(message)
    }
    let exports = loaded.value
    const state = context.getPromiseState(exports)
    if (state.type === 'pending') {
      exports.dispose()
      throw new Error('Bot code may not use top-level await')
    }
    if (state.type === 'rejected') {
      const message = errorText(context, state.error)
      state.error.dispose()
      exports.dispose()
      throw new Error(message)
    }
    if (state.notAPromise !== true) {
      exports.dispose()
      exports = state.value
    }
    const loadFn = context.getProp(vm.api, 'load')
    const summary = context.callFunction(loadFn, vm.api, exports)
    loadFn.dispose()
    exports.dispose()
    if (summary.error) {
      const message = errorText(context, summary.error)
      summary.error.dispose()
      throw new Error(message)
    }
    const text = context.getString(summary.value)
    summary.value.dispose()
    return { vm, summary: text }
  } catch (err) {
    const kind = classify((err as Error).message)
    if (kind !== 'error') {
      abandonVm(vm, `bot code was stopped while loading (${kind})`, kind === 'memory' && exhausted(vm) && !exhausted(vm, true))
      throw err
    }
    if (vm.entries) for (const handle of Object.values(vm.entries)) handle.dispose()
    vm.api?.dispose()
    context.dispose()
    runtime.dispose()
    throw err
  }
}

function takeVm(botKey: string, code: string, limits: SandboxLimits, runId: number): Vm {
  const pool = idle.get(botKey)
  const vm = pool?.pop()
  if (vm) {
    idleCount--
    return vm
  }
  // A new version of the bot: drop VMs of older versions of the same bot.
  const botId = botKey.slice(0, botKey.lastIndexOf('@'))
  for (const [key, vms] of idle) {
    if (key !== botKey && key.startsWith(`${botId}@`)) {
      idleCount -= vms.length
      vms.forEach(disposeVm)
      idle.delete(key)
    }
  }
  return createVm(code, limits, runId).vm
}

function releaseVm(botKey: string, vm: Vm): void {
  if (vm.broken) return
  const pool = idle.get(botKey) ?? []
  if (pool.length >= IDLE_VMS_PER_BOT) return disposeVm(vm)
  pool.push(vm)
  // Re-inserted: the map's order is then least recently used bot first.
  idle.delete(botKey)
  idle.set(botKey, pool)
  idleCount++
  // Over the worker's cap: the least recently used bot gives up an idle VM.
  while (idleCount > MAX_IDLE_VMS) {
    const [oldestKey, oldest] = idle.entries().next().value as [string, Vm[]]
    const dropped = oldest.shift()
    if (oldest.length === 0) idle.delete(oldestKey)
    if (!dropped) continue
    idleCount--
    disposeVm(dropped)
  }
}

async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const { id, botKey, code, entry, input, limits } = message
  let vm: Vm
  try {
    vm = takeVm(botKey, code, limits, id)
  } catch (err) {
    const text = (err as Error).message
    return post({ type: 'done', id, ok: false, kind: classify(text), error: `Bot code failed to load: ${text}` })
  }
  vm.runId = id
  vm.heap = { grew: 0, limitBytes: limits.memoryBytes, refused: undefined }
  vm.interrupted = false
  vm.aborts = 0
  vm.ended = undefined
  vm.maxBudgetMs = limits.budgetMs
  vm.runDeadline = Date.now() + limits.timeoutMs
  vm.deadline = Math.min(Date.now() + limits.budgetMs, vm.runDeadline)
  const { context, runtime } = vm
  let timer: NodeJS.Timeout | undefined
  try {
    const arg = context.newString(input)
    const called = inVm(vm, () => context.callFunction(vm.entries[entry], vm.api, arg))
    arg.dispose()
    if (called.error) {
      const text = errorText(context, called.error)
      called.error.dispose()
      throw new Error(text)
    }
    // The entry's promise is read after each drain (checkSettled), cheaper than resolvePromise's
    // host-side promise (which allocates host functions per call).
    const outcome = await new Promise<Parameters<CurrentRun['settle']>[0] | 'timeout'>((resolve) => {
      vm.current = { promise: called.value, settle: resolve }
      drain(vm)
      // While the run waits (on host calls, or on a promise that never settles) no interrupt can fire:
      // a watch ends it once its unit's budget or the run's limit has passed.
      timer = setInterval(() => {
        if (vm.ended === 'memory') return resolve({ ok: false, error: 'InternalError: out of memory' })
        if (Date.now() <= Math.min(vm.deadline, vm.runDeadline)) return
        // The unit ran out of time while waiting: it fails and the turn goes on; otherwise the run is over.
        if (vm.ended === undefined && abortUnit(vm)) drain(vm)
        else resolve('timeout')
      }, 25)
    })
    if (outcome === 'timeout') throw new Error('interrupted: the run exceeded its time limit')
    if (!outcome.ok) throw new Error(outcome.error)
    const { output } = outcome
    if (runtime.hasPendingJob()) {
      // Promise jobs still queued once the run is over: a chain the bot left running (e.g. an endless
      // un-awaited .then loop). It would burn the next run's time: the VM is thrown away instead.
      post({ type: 'log', id, level: 'error', text: 'Promise jobs were still running after the run ended (a promise chain left running?): they were stopped and the sandbox discarded' })
      // Such a bot is quarantined too: its chains would keep taking turns from other bots' runs.
      post({ type: 'done', id, ok: true, output, limited: true })
      if (vm.interrupted) abandonVm(vm, 'a run was interrupted at its time limit')
      else disposeVm(vm)
      return
    }
    post({ type: 'done', id, ok: true, output, ...(limited(vm, limits) ? { limited: true } : {}) })
    // A VM some of whose code was interrupted may hold half-updated state (the prelude's included): it is
    // not reused, nor freed in place.
    if (vm.interrupted) abandonVm(vm, 'a run was interrupted at its time limit')
    else releaseVm(botKey, vm)
    // What a run allocated stays resident in the heap (WebAssembly memories never shrink, nor does QuickJS's
    // allocator give pages back): a worker whose heap one run grew by half a bot's limit, or that has grown past
    // the recycle size, is replaced, and its memory given back.
    const heap = memory.buffer.byteLength
    if (heap > options.recycleBytes || vm.heap.grew > limits.memoryBytes / 2) retire(`its heap grew to ${Math.round(heap / 1048576)} MB`)
  } catch (err) {
    const text = (err as Error).message
    const kind = classify(text)
    // Out of memory with the worker's or the pool's heaps exhausted, in a VM that barely grew them: other runs
    // exhausted them. This run is not at fault: the pool starts it again on another worker.
    const retry = kind === 'memory' && exhausted(vm, true)
    post({ type: 'done', id, ok: false, kind, error: text, ...(retry && { retry }) })
    // A VM that was interrupted or ran out of memory may hold half-updated state: never reuse it, nor
    // free it in place (abandonVm); one that failed otherwise is freed. One that exhausted the worker's or
    // the pool's heaps holds what it grew them by, which other runs need: the worker is terminated at once.
    if (kind === 'error') disposeVm(vm)
    else abandonVm(vm, kind === 'memory' ? 'a run ran out of memory' : 'a run was stopped at its time limit', kind === 'memory' && exhausted(vm) && !retry)
  } finally {
    clearInterval(timer)
    if (!vm.broken && vm.current) {
      vm.current.promise.dispose()
      vm.current = undefined
    }
  }
}

/**
 * The run reached a limit and went on: some of its code was interrupted at its time limit, or it grew the
 * shared heap by more than half its memory limit (an out-of-memory error its code or the prelude caught).
 */
function limited(vm: Vm, limits: SandboxLimits): boolean {
  return vm.interrupted || vm.heap.grew > limits.memoryBytes / 2
}

/** Most units of one run that abortUnit may end; past it, the run itself is ended. */
const MAX_ABORTS = 20
/** Time the prelude gets, once a unit is ended, to record it and go on to the next hook or card (with its own budget). */
const ABORT_GRACE_MS = 100

/**
 * The current unit of user code overran its budget: it fails inside the prelude, which records it and
 * goes on with the turn (remaining hooks and cards still run). False when no unit was running, the run
 * itself is out of time, or it had too many units ended: the run is then ended.
 */
function abortUnit(vm: Vm): boolean {
  vm.interrupted = true
  const now = Date.now()
  if (vm.broken || now > vm.runDeadline || vm.aborts >= MAX_ABORTS) return false
  vm.aborts++
  vm.deadline = Math.min(now + ABORT_GRACE_MS, vm.runDeadline)
  const result = inVm(vm, () => vm.context.callFunction(vm.entries.abortUnit, vm.api))
  if (result.error) {
    result.error.dispose()
    return false
  }
  const aborted = vm.context.dump(result.value) === true
  result.value.dispose()
  return aborted
}

/**
 * A job ended with an error QuickJS does not let code catch: an interrupt at the time limit (its unit is
 * ended, see abortUnit), or memory exhausted (the run is ended).
 */
function overran(vm: Vm, kind: SandboxFailure): void {
  if (kind === 'error') return
  if (kind === 'timeout' && abortUnit(vm)) return
  vm.ended = kind === 'memory' ? 'memory' : 'timeout'
  vm.deadline = 0
}

/** Ends the VM's current run once its entry's promise has settled (promises settle only while this worker drives the VM). */
function checkSettled(vm: Vm): void {
  const current = vm.current
  if (!current || vm.broken) return
  const { context } = vm
  const state = context.getPromiseState(current.promise)
  if (state.type === 'pending') return
  vm.current = undefined
  if (state.type === 'fulfilled') {
    const output = context.getString(state.value)
    if (!state.notAPromise) state.value.dispose()
    current.promise.dispose()
    current.settle({ ok: true, output })
  } else {
    const error = errorText(context, state.error)
    state.error.dispose()
    current.promise.dispose()
    current.settle({ ok: false, error })
  }
}

/**
 * Runs pending promise jobs in slices, yielding to the event loop every DRAIN_SLICE_MS: the run's
 * own completion (a host-side promise), host results and other runs on this worker go on while a
 * chain of jobs keeps scheduling more. Such a chain (even one that catches its own interruption) is
 * left unfinished once the budget has passed: the run's watch then ends the run, or the run ends
 * normally and the VM, still holding jobs, is thrown away.
 */
function drain(vm: Vm): void {
  runJobs(vm)
  checkSettled(vm)
}

function runJobs(vm: Vm): void {
  if (vm.broken) return
  const sliceEnd = Date.now() + DRAIN_SLICE_MS
  for (;;) {
    const result = inVm(vm, () => vm.runtime.executePendingJobs(256))
    if (result.error) {
      const text = errorText(vm.context, result.error)
      result.error.dispose()
      overran(vm, classify(text))
    }
    if (vm.broken || !vm.runtime.hasPendingJob()) return
    const now = Date.now()
    if (now > Math.min(vm.deadline, vm.runDeadline)) return
    if (now >= sliceEnd) {
      beat[BEAT_HOG] = now
      beat[BEAT_HOG_RUN] = vm.runId
      if (!vm.drainScheduled) {
        vm.drainScheduled = true
        setImmediate(() => {
          vm.drainScheduled = false
          drain(vm)
        })
      }
      return
    }
  }
}

function check(message: Extract<ToWorker, { type: 'check' }>): void {
  try {
    const { vm, summary } = createVm(message.code, message.limits, message.id)
    disposeVm(vm)
    post({ type: 'checked', id: message.id, ok: true, summary })
  } catch (err) {
    post({ type: 'checked', id: message.id, ok: false, error: (err as Error).message })
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'check':
      return check(message)
    case 'run':
      return void run(message)
    case 'hostResult': {
      const vm = hostCalls.get(message.callId)
      if (!vm) return
      hostCalls.delete(message.callId)
      if (vm.broken) return
      const { context } = vm
      const args = [context.newNumber(message.callId), message.ok ? context.true : context.false, context.newString(message.value)] as const
      const settled = inVm(vm, () => context.callFunction(vm.entries.settle, context.undefined, ...args))
      args[0].dispose()
      args[2].dispose()
      if (settled.error) {
        // Only an interrupt or the memory limit can fail it: the run's watch ends the run.
        const text = errorText(context, settled.error)
        settled.error.dispose()
        overran(vm, classify(text))
      } else settled.value.dispose()
      return drain(vm)
    }
  }
})

post({ type: 'ready' })
