/*
 * A run (one turn, beforeIncoming or action call) and its units of user code: each unit gets a fresh budget from the
 * host, and fails with a timeout when the host ends it (abortUnit); failures are recorded on the run and logged.
 */
import { hostBudget, hostDeadlineChanged, hostOutOfMemory, log, runStarted } from './host.js'
import { HostPromise, mathMax, mathMin, now } from './intrinsics.js'
import type { Run } from './types.js'
import { deployedPosition, errText } from './util.js'

const DEFAULT_BUDGET_MS = 5000

export function fail(rt: Run, where: string, err: unknown): void {
  let message = errText(err)
  // QuickJS out of memory throws null when it has no memory left to make an error.
  if ((err === null || err === undefined) && hostOutOfMemory()) {
    message = 'out of memory: it used more than its memory limit (PARLEY_BOT_MEMORY_MB)'
  }
  // Stopped at the time limit (QuickJS's interrupt, or abortUnit): say which limit, and the setting behind it.
  if (message === 'interrupted' || message === 'InternalError: interrupted' || message.indexOf('timed out (its wall-time budget ran out)') === 0) {
    message = 'timed out: it ran longer than its ' + rt.budgetMs + ' ms budget (each hook, card or action; set by PARLEY_BOT_TIMEOUT_MS, or the bot\'s maxExecutionTime in seconds)'
  }
  const at = deployedPosition(err)
  const text = where + ': ' + message + (at ? ' (at ' + at + ')' : '')
  rt.errors.push(text)
  log('error', text)
}

export function newRun(budgetMs: unknown): Run {
  const ms = typeof budgetMs === 'number' && budgetMs > 0 && budgetMs < Infinity ? budgetMs : DEFAULT_BUDGET_MS
  runStarted(ms)
  return { budgetMs: ms, deadline: 0, errors: [], visits: 0, handled: false }
}

/** Fails the top-level unit running now (see abortUnit). */
export let abortCurrent: ((err: Error) => void) | undefined

/**
 * Runs one top-level unit of user code (a hook, a card, an action card...) with a fresh budget. The host
 * ends a unit that overruns it through abortUnit: the unit then fails with a timeout, whatever its code
 * is doing (waiting forever, or interrupted in a job its own awaits never resume).
 *
 * A unit that returns a promise waits for it or for its abort, whichever comes first; one that returns anything
 * else is over when it returns (its code can only have been stopped by the interrupt). Measured in QuickJS: a
 * `Promise.race` of the unit's promise and a fresh abort promise, for each of a turn's two units, made an echo turn's
 * prelude work ~10% slower than this.
 */
export async function unit<T>(rt: Run, fn: () => T | Promise<T>): Promise<T> {
  rt.deadline = now() + rt.budgetMs
  hostBudget(rt.budgetMs)
  try {
    const result = fn()
    if (!isThenable(result)) return result
    let abort: ((err: Error) => void) | undefined
    const settled = new HostPromise<T>((resolve, reject) => {
      abort = reject
      void settleInto(result, resolve, reject)
    })
    abortCurrent = abort
    try {
      return await settled
    } finally {
      if (abortCurrent === abort) abortCurrent = undefined
    }
  } finally {
    rt.deadline = 0
  }
}

/** Resolves or rejects with what `value` settles to; `await` follows it without reading a `then` bot code may have replaced on promises. */
async function settleInto<T>(value: PromiseLike<T>, resolve: (v: T) => void, reject: (err: unknown) => void): Promise<void> {
  try {
    resolve(await value)
  } catch (err) {
    reject(err)
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

export function abortUnit(): boolean {
  hostDeadlineChanged()
  const abort = abortCurrent
  if (abort === undefined) return false
  abortCurrent = undefined
  abort(new Error('timed out (its wall-time budget ran out)'))
  return true
}

/**
 * Budget of user code started BY user code (an action called through ctx.actions, the outgoing hooks of a
 * client.createMessage): it shares the deadline of the unit that called it, so calling actions in a loop cannot
 * extend a unit's time. Outside any unit (a promise left running by finished code) it gets a fresh budget.
 */
export function nestedBudget(rt: Run): void {
  hostBudget(remainingMs(rt))
}

/** What is left of the budget of the unit running now (a whole budget outside any unit). */
export function remainingMs(rt: Run): number {
  return rt.deadline === 0 ? rt.budgetMs : mathMax(1, mathMin(rt.budgetMs, rt.deadline - now()))
}
