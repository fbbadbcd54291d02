/*
 * The host's functions (host.call, host.budget, host.log) and helpers (previewOf), as parleyPrelude received them.
 * Bound once, by index.ts, when the worker calls the bundle; module bindings, not globals: bot code cannot reach them.
 */
import type { LogLevel, PreludeHelpers, PreludeHost } from '../prelude-contract.js'
import { now } from './intrinsics.js'

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

/**
 * The deadline the host holds now, as this VM last set it (0: not known, the next budget is set). A run starts with the
 * host's deadline at its start plus its budget (PreludeHost.budget); the host shortens it when it ends a unit (abortUnit).
 */
let hostDeadline = 0

/** A run starts: the host set its deadline to now plus `ms`, the run's budget. */
export function runStarted(ms: number): void {
  hostDeadline = now() + ms
}

/** The host changed its deadline on its own (a unit it ended gets a grace period): the next budget is set. */
export function hostDeadlineChanged(): void {
  hostDeadline = 0
}

/**
 * The wall-time budget of the user code about to run. A budget whose deadline the host holds already, give or take
 * 1% of it (a unit starting within that of the run's start or of the last budget set), is not sent again: a call out
 * of the VM costs more than a unit of most turns' code (measured: two such calls were ~50 µs of an echo turn's ~300
 * in the sandbox worker).
 */
export function hostBudget(ms: number): void {
  const deadline = now() + ms
  const slack = ms / 100
  if (hostDeadline !== 0 && deadline - hostDeadline <= slack && hostDeadline - deadline <= slack) return
  hostDeadline = deadline
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
