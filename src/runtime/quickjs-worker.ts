/**
 * A sandbox worker thread: hosts QuickJS (WebAssembly) virtual machines for bot code.
 * Bot code only ever runs inside QuickJS; this thread's own globals (process, require, fs…) are
 * unreachable from it. The only ways out are the three host functions of quickjs-host-bridge.ts,
 * which forward JSON to the main thread.
 *
 * This module is the thread's entry (the pool starts it, see QuickJsSandbox.createWorker): it answers
 * the pool's messages (quickjs-protocol.ts). Its parts, each importing only those before it:
 * quickjs-worker-thread.ts (link to the pool, heartbeat, heap accounting), quickjs-host-bridge.ts (the
 * prelude and host calls), quickjs-vm.ts (VM lifecycle and idle VMs), quickjs-run.ts (runs and limits).
 */
import type { ToWorker } from './quickjs-protocol.js'
import { run, settleHostCall } from './quickjs-run.js'
import { createVm, disposeVm } from './quickjs-vm.js'
import { port, post } from './quickjs-worker-thread.js'

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
    case 'hostResult':
      return settleHostCall(message)
  }
})

post({ type: 'ready' })
