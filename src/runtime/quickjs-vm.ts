/**
 * The VMs of a sandbox worker: created with the prelude and a bot's module loaded, kept idle per bot version for
 * the bot's next runs, and disposed of, or abandoned with the worker retired when freeing them is unsafe.
 */
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from 'quickjs-emscripten'
import { forgetHostCalls, installHost } from './quickjs-host-bridge.js'
import { classify, errorText, exhausted, inVm, memory, retire, type Vm } from './quickjs-worker-thread.js'
import type { SandboxLimits } from './sandbox.js'

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

const QuickJS = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory }))
const idle = new Map<string, Vm[]>()
let idleCount = 0

/**
 * A VM whose code was interrupted or ran out of memory is never freed in place: freeing a runtime
 * stopped mid-job trips QuickJS's leak assertion (`list_empty(&rt->gc_obj_list)`), which aborts the
 * whole WebAssembly module and every other run on this worker. It is dropped as it is and the worker
 * retired, so the memory it holds goes back with the worker's heap.
 */
export function abandonVm(vm: Vm, reason: string, now = false): void {
  vm.broken = true
  forgetHostCalls(vm)
  vm.current = undefined
  retire(reason, now)
}

export function disposeVm(vm: Vm): void {
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
export function createVm(code: string, limits: SandboxLimits, runId: number): { vm: Vm; summary: string } {
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
    installHost(vm)

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

export function takeVm(botKey: string, code: string, limits: SandboxLimits, runId: number): Vm {
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

/** The VMs kept idle for reuse on this worker. */
export const idleVmCount = (): number => idleCount

export function releaseVm(botKey: string, vm: Vm): void {
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
