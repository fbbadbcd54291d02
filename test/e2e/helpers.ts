/**
 * Small shared helpers for the e2e suite: raw HTTP calls (where the status matters, which the
 * official client hides), unique ids, ISO date checks, and waiting on the official client's
 * SignalListener with timeouts instead of sleeps.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { randomUUID } from 'node:crypto'
import * as chat from '@botpress/chat'
import { expect } from 'vitest'
import type { Harness } from '../helpers/harness.js'
import { ISO_Z } from '../helpers/formats.js'

/** `Date#toISOString()` output: UTC with milliseconds and a `Z` suffix. */
export { ISO_Z }

export function expectIsoZ(value: unknown): void {
  expect(value).toEqual(expect.stringMatching(ISO_Z))
  expect(new Date(value as string).toISOString()).toBe(value)
}

/** A foreign id that is valid for users and conversations, unique per call. */
export const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 13)}`

export interface RawResponse {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  text: string
}

/** One request on the Chat API without the official client, e.g. to see the status code. */
export async function raw(
  apiUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
  if (options.key !== undefined) headers['x-user-key'] = options.key
  let body: string | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined) headers['content-type'] ??= 'application/json'
  const response = await fetch(`${apiUrl}${path}`, { method, headers, ...(body !== undefined && { body }) })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

/** The Botpress error body (wire-compat §2.3): all of id, code, type, message, with code == status. */
export function expectErrorBody(res: RawResponse, status: number, type: string): void {
  expect(res.status, res.text).toBe(status)
  expect(res.body).toMatchObject({ code: status, type })
  expect(typeof res.body.id).toBe('string')
  expect(res.body.id.length).toBeGreaterThan(0)
  expect(typeof res.body.message).toBe('string')
}

/** A user authenticated with a JWT minted by the official client from the integration's encryption key. */
export function connectJwt(h: Harness, userId = uid('user')): Promise<chat.AuthenticatedClient> {
  return chat.Client.connect({ apiUrl: h.credentials.chat.url, encryptionKey: h.credentials.chat.encryptionKey, userId })
}

/** A user created by the server (POST /users), authenticated with the server-issued key. */
export function connectServerKey(h: Harness, userId?: string): Promise<chat.AuthenticatedClient> {
  return chat.Client.connect({ apiUrl: h.credentials.chat.url, ...(userId !== undefined && { userId }) })
}

/**
 * The next `type` signal on an official SignalListener that satisfies `filter`. Rejects on the
 * listener's `error` or after `timeoutMs`; always detaches its handlers.
 */
export function nextSignal<S extends keyof chat.Signals>(
  listener: chat.SignalListener,
  type: S,
  options: { timeoutMs?: number; filter?: (signal: chat.Signals[S]) => boolean } = {},
): Promise<chat.Signals[S]> {
  const { timeoutMs = 5000, filter = () => true } = options
  return new Promise<chat.Signals[S]>((resolve, reject) => {
    const onSignal = (signal: chat.Signals[S]) => {
      if (!filter(signal)) return
      cleanup()
      resolve(signal)
    }
    const onError = (err: Error) => {
      cleanup()
      reject(err)
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`no "${String(type)}" signal within ${timeoutMs} ms`))
    }, timeoutMs)
    const cleanup = () => {
      clearTimeout(timer)
      // The emitter's types key listeners by event name; both handlers are registered under their own name.
      ;(listener.off as (t: string, l: (e: never) => void) => void)(type as string, onSignal as (e: never) => void)
      listener.off('error', onError)
    }
    ;(listener.on as (t: string, l: (e: never) => void) => void)(type as string, onSignal as (e: never) => void)
    listener.on('error', onError)
  })
}

/** Resolves with the listener's next `error` (e.g. the server ended the stream); rejects after `timeoutMs`. */
export function nextListenerError(listener: chat.SignalListener, timeoutMs = 5000): Promise<Error> {
  return new Promise<Error>((resolve, reject) => {
    const onError = (err: Error) => {
      clearTimeout(timer)
      listener.off('error', onError)
      resolve(err)
    }
    const timer = setTimeout(() => {
      listener.off('error', onError)
      reject(new Error(`listener reported no error within ${timeoutMs} ms`))
    }, timeoutMs)
    listener.on('error', onError)
  })
}

/** Collects every `type` signal of a listener into an array (for "received nothing more" checks). */
export function record<S extends keyof chat.Signals>(listener: chat.SignalListener, type: S): chat.Signals[S][] {
  const out: chat.Signals[S][] = []
  ;(listener.on as (t: string, l: (e: chat.Signals[S]) => void) => void)(type as string, (signal) => out.push(signal))
  return out
}

/** Removes `isBot` from a stream signal, leaving the resource as get/list return it. */
export function withoutIsBot<T extends { isBot: boolean }>(signal: T): Omit<T, 'isBot'> {
  const { isBot: _isBot, ...rest } = signal
  return rest
}

export { sleep }

export async function closeListener(listener: chat.SignalListener | undefined): Promise<void> {
  if (!listener) return
  await listener.disconnect()
  listener.cleanup()
}

/** Polls `predicate` every few milliseconds until it holds; rejects after `timeoutMs` with `what`. */
export async function until(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(5)
  }
}
