/**
 * Delivery semantics (issue #25 item 2; docs/sdk-bots.md "Delivery semantics"): which outcome of a POST to a remote bot
 * or an integration is final and which is sent again. One rule for every delivery (events to remote bots, bot messages,
 * `register` and webhook relays to integrations):
 *
 * - retried (the bot's code did not get it, or asked for it later): no connection, or the connection closed before any
 *   byte of an answer; an answer 502, 503 or 504 (a proxy in front of a program that is down); 429, after its
 *   `Retry-After` (at most maxBackoffMs). At most `attempts` POSTs, the waits between them inside the budget.
 * - final: any other answer (2xx: processed; 4xx/5xx: the bot's code failed, e.g. the SDK's 400 `RuntimeError` when a
 *   handler throws, recorded with the error's message when the answer is an SDK error body); and the budget running
 *   out with no answer (timed out: its handler may still run, so it is never sent again).
 */
import { OutboundError, answeredStatus, outboundFailure } from '../lib/outbound-policy.js'

/** One request's answer (remote-bots.ts RemoteAnswer). */
export interface Answer { status: number; body: string; headers?: Record<string, string> }

/** No answer within the time given: its handler may still be running. */
export class AnswerTimeout extends OutboundError {
  constructor(ms: number) {
    super(`timed out (no answer within ${ms} ms)`)
  }
}

/** The connection closed after the answer had begun: the bot's code got the request. */
export class AnswerCut extends OutboundError {
  constructor() {
    super('the connection closed during the answer')
  }
}

export type Verdict =
  | { kind: 'processed' }
  | { kind: 'retry'; reason: string; afterMs?: number | undefined }
  | { kind: 'final'; failure: 'error' | 'timeout'; reason: string }

const RETRIED_STATUSES = new Set([502, 503, 504])
/** Longest message quoted from an SDK error answer. */
const MESSAGE_CHARS = 300
/** Shapes of credentials blanked out of a quoted message (API keys, bearer tokens, JWTs, long hex or base64 runs). */
const SECRET_LIKE = /\b(?:bak|iak|pat|sk)_[\w-]+|\bBearer\s+\S+|\beyJ[\w-]+\.[\w-]+\.[\w-]*|\b[A-Fa-f0-9]{32,}\b|[A-Za-z0-9+/_-]{40,}={0,2}/g
const ERROR_KEYS = new Set(['id', 'code', 'type', 'message', 'metadata'])

/**
 * The message of an SDK error answer (`{ id, code, type, message }`, what @botpress/sdk's servers answer when a handler
 * throws), short and without anything shaped like a credential; undefined for any other body (an answer that is not a
 * bot's is never quoted: the url may be an internal service's).
 */
export function sdkErrorMessage(status: number, body: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const error = parsed as Record<string, unknown>
  if (!Object.keys(error).every((k) => ERROR_KEYS.has(k)) || error.code !== status) return undefined
  if (typeof error.type !== 'string' || !/^[A-Z][A-Za-z]{1,40}$/.test(error.type) || typeof error.message !== 'string') return undefined
  // eslint-disable-next-line no-control-regex
  const text = error.message.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(SECRET_LIKE, '[redacted]')
  return `${error.type}: ${text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text}`
}

/** Retry-After (seconds or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** What an answer means for its delivery. */
export function judgeAnswer(answer: Answer, now: number): Verdict {
  const { status } = answer
  if (status >= 200 && status < 300) return { kind: 'processed' }
  if (RETRIED_STATUSES.has(status)) return { kind: 'retry', reason: answeredStatus(status) }
  if (status === 429) return { kind: 'retry', reason: answeredStatus(status), afterMs: retryAfterMs(answer.headers?.['retry-after'], now) }
  const message = sdkErrorMessage(status, answer.body)
  return { kind: 'final', failure: 'error', reason: message ? `${answeredStatus(status)} (${message})` : answeredStatus(status) }
}

/** What a request that got no (whole) answer means: a timeout and a cut answer are final, no connection is retried. */
export function judgeError(err: unknown): Verdict {
  if (err instanceof AnswerTimeout) return { kind: 'final', failure: 'timeout', reason: `${err.message}; not sent again: its handler may still be running` }
  // Refused by the outbound policy (OutboundRefused: retrying changes nothing), a cut or oversized answer (the target got it).
  if (err instanceof OutboundError) return { kind: 'final', failure: 'error', reason: outboundFailure(err) }
  return { kind: 'retry', reason: outboundFailure(err) }
}

export interface RetrySettings {
  attempts: number
  backoffMs: number
  maxBackoffMs: number
}

/** The wait before retry number `retry` (1-based): backoffMs doubled each time, capped at maxBackoffMs. */
export function backoff(settings: RetrySettings, retry: number): number {
  return Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** (retry - 1))
}

export type DeliveryResult =
  | { delivered: true; answer: Answer; attempts: number }
  | { delivered: false; failure: DeliveryFailure; reason: string; attempts: number; answer?: Answer | undefined; cause?: unknown }

/**
 * Why a delivery failed: `error` (the bot's or integration's code answered an error, or the answer was refused),
 * `timeout` (no answer within the budget), `unreachable` (never processed: no connection or 502/503/504/429 on every attempt).
 */
export type DeliveryFailure = 'error' | 'timeout' | 'unreachable'

export interface RetryRun {
  settings: RetrySettings
  /** How long the whole delivery may take (every attempt and wait). */
  budgetMs: number
  clock: () => number
  /** Waits `ms` (rejects when the instance stops). */
  wait: (ms: number) => Promise<void>
  /** One attempt, given the time left; rejects with what send() rejects. Errors it does not judge (stopped, deferred…) pass through `passes`. */
  send: (attempt: number, timeoutMs: number) => Promise<Answer>
  /** Errors that end the delivery unrecorded (the instance stops, the endpoint is paused, a lease was lost). */
  passes: (err: unknown) => boolean
  /** Before each wait between attempts (a lease renewed). */
  beforeWait?: (() => Promise<void>) | undefined
  /** Told of each attempt that was not processed (metrics). */
  onRetry?: (() => void) | undefined
}

/** Runs a delivery by the rules above: its outcome (nothing is recorded here). */
export async function deliverWithRetries(run: RetryRun): Promise<DeliveryResult> {
  const deadline = run.clock() + run.budgetMs
  let last: Answer | undefined
  let cause: unknown
  for (let attempt = 1; ; attempt++) {
    let verdict: Verdict
    try {
      last = await run.send(attempt, Math.max(1, deadline - run.clock()))
      cause = undefined
      verdict = judgeAnswer(last, run.clock())
    } catch (err) {
      if (run.passes(err)) throw err
      last = undefined
      cause = err
      verdict = judgeError(err)
    }
    if (verdict.kind === 'processed') return { delivered: true, answer: last!, attempts: attempt }
    if (verdict.kind === 'final') return { delivered: false, failure: verdict.failure, reason: verdict.reason, attempts: attempt, answer: last, cause }
    run.onRetry?.()
    const waitMs = Math.min(run.settings.maxBackoffMs, verdict.afterMs ?? backoff(run.settings, attempt))
    if (attempt >= run.settings.attempts) return { delivered: false, failure: 'unreachable', reason: verdict.reason, attempts: attempt, answer: last, cause }
    if (run.clock() + waitMs >= deadline) {
      return { delivered: false, failure: 'unreachable', reason: `${verdict.reason} (no time left in the delivery budget for another attempt)`, attempts: attempt, answer: last, cause }
    }
    await run.beforeWait?.()
    await run.wait(waitMs)
  }
}

/** The log line of a failed delivery (`what`: "Delivery of … to …"): why, never the answer's body beyond an SDK error's message. */
export function failureLine(what: string, result: Extract<DeliveryResult, { delivered: false }>): string {
  return `${what} failed after ${result.attempts} attempt(s): ${result.reason}`
}
