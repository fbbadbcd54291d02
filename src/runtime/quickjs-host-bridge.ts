/**
 * The bridge between bot code in a VM and the host: the prelude installed with the three host functions (the only
 * ways out of a VM, which forward JSON to the pool), and the host calls in flight, settled in the realm of the VM
 * that made them.
 */
import { parleyPrelude } from './prelude.js'
import { previewOf } from './preview.js'
import type { LogLevel } from './prelude-contract.js'
import { BEAT_DEADLINE } from './quickjs-protocol.js'
import { beat, options, post, type Vm } from './quickjs-worker-thread.js'

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
  var call = globalThis.__host_call, budget = globalThis.__host_budget, log = globalThis.__host_log, memory = globalThis.__host_memory;
  delete globalThis.__host_call; delete globalThis.__host_budget; delete globalThis.__host_log; delete globalThis.__host_memory;
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
    log: logLine,
    outOfMemory: function () { return memory() === true }
  });
  // The prelude's entry points are handed to the worker only (SETUP's value): nothing global names them,
  // so bot code cannot re-enter the runtime (a re-entered turn would start units with fresh budgets).
  var api = (${parleyPrelude.toString()})(host, { previewOf: (${previewOf.toString()}), methods: ${JSON.stringify(options?.methods ?? [])} });
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

let nextCallId = 1
/** Host calls in flight, by call id: the VM that made them (which settles them in its own realm). */
const hostCalls = new Map<number, Vm>()

/**
 * Installs the host functions and the prelude (SETUP) in a fresh VM, and keeps the prelude's entry points
 * (`vm.api`, `vm.entries`).
 */
export function installHost(vm: Vm): void {
  const { context } = vm
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
  // Whether this run's heap growth was refused (sandbox-heap.ts): the VM is out of memory.
  const memory = context.newFunction('__host_memory', () => (vm.heap.refused !== undefined ? context.true : context.false))
  for (const [name, fn] of [['__host_call', hostCall], ['__host_budget', budget], ['__host_log', log], ['__host_memory', memory]] as const) {
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
}

/** The VM that made a host call, which is no longer in flight; undefined if the call was forgotten. */
export function takeHostCall(callId: number): Vm | undefined {
  const vm = hostCalls.get(callId)
  if (vm) hostCalls.delete(callId)
  return vm
}

/** Forgets the VM's host calls in flight: their results, if they come, are dropped. */
export function forgetHostCalls(vm: Vm): void {
  for (const [callId, owner] of hostCalls) if (owner === vm) hostCalls.delete(callId)
}
