/* Small pure helpers of the prelude: type tests, error texts, ids, JSON copies. */
import { defineProperty, floor, ownProperty, isArray, jsonParse, jsonStringify, now, random } from './intrinsics.js'
import type { Json } from './types.js'

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !isArray(v)
}

export function hasOwn(o: object, k: string): boolean {
  return ownProperty.call(o, k)
}

export function setOwn(o: Json, k: string, v: unknown): void {
  defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
}

export function describe(v: unknown): string {
  if (v === null) return 'null'
  if (v === undefined) return 'undefined'
  if (isArray(v)) return 'an array'
  const t = typeof v
  return (t === 'object' ? 'an ' : 'a ') + t
}

export function quote(s: string): string {
  return jsonStringify(s.length > 60 ? s.slice(0, 59) + '…' : s)
}

export function pathKey(base: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? base + '.' + key : base + '[' + jsonStringify(key) + ']'
}

export function errText(err: unknown): string {
  try {
    const e = err as { message?: unknown } | null | undefined
    return String((e && e.message) || err)
  } catch {
    return 'unknown error'
  }
}

/** Where in the deployed module the error was raised: the first `bot.js:LINE:COLUMN` of its stack (the host maps it to the bot's own file). */
export function deployedPosition(err: unknown): string | undefined {
  try {
    const stack = (err as { stack?: unknown } | null | undefined)?.stack
    if (typeof stack !== 'string') return undefined
    const m = /\bbot\.js:\d+:\d+/.exec(stack)
    return m ? m[0] : undefined
  } catch {
    return undefined
  }
}

/** A UUIDv7-shaped id (time-ordered; Math.random is the only randomness in the sandbox). */
export function newId(): string {
  const hex = '0123456789abcdef'
  let ms = now()
  let s = ''
  for (let i = 0; i < 12; i++) {
    s = hex.charAt(ms % 16) + s
    ms = floor(ms / 16)
  }
  s += '7'
  for (let i = 0; i < 19; i++) s += i === 3 ? hex.charAt(8 + floor(random() * 4)) : hex.charAt(floor(random() * 16))
  return s.slice(0, 8) + '-' + s.slice(8, 12) + '-' + s.slice(12, 16) + '-' + s.slice(16, 20) + '-' + s.slice(20)
}

/** A detached JSON copy (throws on cycles, BigInt...). */
export function jsonClone<T>(v: T): T {
  const text = jsonStringify(v)
  return (text === undefined ? undefined : jsonParse(text)) as T
}

export function toText(v: unknown): string {
  if (typeof v === 'string') return v
  if (v === undefined || v === null) return ''
  if (typeof v === 'object') {
    try {
      const s = jsonStringify(v)
      if (s !== undefined) return s
    } catch {
      // fall through
    }
  }
  return String(v)
}

/** handoff_started / handoff_ended: events (they match `{ type: 'event', name }` triggers, never message triggers or a waiting capture). */
export function isHandoffEvent(event: Json): boolean {
  return event.type === 'handoff_started' || event.type === 'handoff_ended'
}

export function isPayload(p: unknown): p is Json {
  return isObj(p) && typeof p.type === 'string' && p.type !== ''
}
