/*
 * The host's functions (host.call, host.budget, host.log) and helpers (previewOf), as parleyPrelude received them.
 * Bound once, by index.ts, when the worker calls the bundle; module bindings, not globals: bot code cannot reach them.
 */
import type { LogLevel, PreludeHelpers, PreludeHost } from '../prelude-contract.js'

let host: PreludeHost
let previewOf: PreludeHelpers['previewOf']
let methods: readonly string[] = []

export function bindHost(h: PreludeHost, helpers: PreludeHelpers): void {
  host = h
  previewOf = helpers.previewOf
  methods = helpers.methods
}

/** The client methods passed to the host as they are (PreludeHelpers.methods: the operation table's). */
export function passedThrough(): readonly string[] {
  return methods
}

/** A platform call on the bot's behalf: JSON text in, JSON text out (prelude-contract.ts PreludeHost.call). */
export function hostCall(method: string, argsJson: string): Promise<string> {
  return host.call(method, argsJson)
}

/** The wall-time budget of the user code about to run. */
export function hostBudget(ms: number): void {
  host.budget(ms)
}

export function log(level: LogLevel, text: string): void {
  try {
    host.log(level, text)
  } catch {
    // logging must never break a turn
  }
}

/** Whether the run was refused memory (PreludeHost.outOfMemory): false when the host cannot say. */
export function hostOutOfMemory(): boolean {
  try {
    return host.outOfMemory?.() === true
  } catch {
    return false
  }
}

export function safePreview(payload: unknown): string {
  try {
    return previewOf(payload)
  } catch {
    return ''
  }
}
