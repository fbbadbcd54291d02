/**
 * Runs of bot code on a sandbox worker's VMs: a run's entry called, its promise jobs drained in slices until it
 * settles, host results settled in its VM, and its time limits kept (a unit that overran is ended and the run
 * goes on; past the run's own limit, or at its memory limit, the run is ended).
 */
import { BEAT_HOG, BEAT_HOG_RUN, type ToWorker } from './quickjs-protocol.js'
import { takeHostCall } from './quickjs-host-bridge.js'
import { abandonVm, disposeVm, idleVmCount, releaseVm, takeVm } from './quickjs-vm.js'
import { beat, classify, errorText, exhausted, inVm, post, ranOutOfMemory, retireIfGrown, type CurrentRun, type Vm } from './quickjs-worker-thread.js'
import type { SandboxFailure, SandboxLimits } from './sandbox.js'

/** A drain yields to the event loop after this long, so host results and other runs are not starved. */
const DRAIN_SLICE_MS = 5

export async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
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
    retireIfGrown(vm, limits, idleVmCount())
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
 * shared heap by more than half its memory limit, or ran out of memory after growing it (an out-of-memory error
 * its code or the prelude caught: at its own limit, or the pool's when other runs took the rest).
 */
function limited(vm: Vm, limits: SandboxLimits): boolean {
  return vm.interrupted || vm.heap.grew > limits.memoryBytes / 2 || ranOutOfMemory(vm)
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

/** A host call's result, from the pool: settled in the realm of the VM that made the call, whose jobs then go on. */
export function settleHostCall(message: Extract<ToWorker, { type: 'hostResult' }>): void {
  const vm = takeHostCall(message.callId)
  if (!vm) return
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
