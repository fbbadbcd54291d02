/**
 * Query strings as the official clients write them (qs with `allowDots` and `arrayFormat: 'repeat'`):
 * `tags.env=prod` → { tags: { env: 'prod' } }, `ids=a&ids=b` → { ids: ['a', 'b'] }.
 * One level of nesting is all the APIs use; keys that could reach a prototype are dropped.
 */
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype'])

type QueryValue = string | string[] | Record<string, string | string[]>

function add(target: Record<string, unknown>, key: string, value: string): void {
  const existing = target[key]
  if (existing === undefined) target[key] = value
  else if (Array.isArray(existing)) existing.push(value)
  else if (typeof existing === 'string') target[key] = [existing, value]
}

export function parseQueryString(query: string): Record<string, QueryValue> {
  const result: Record<string, unknown> = {}
  for (const [rawKey, value] of new URLSearchParams(query)) {
    const dot = rawKey.indexOf('.')
    if (dot <= 0) {
      if (!UNSAFE.has(rawKey)) add(result, rawKey, value)
      continue
    }
    const head = rawKey.slice(0, dot)
    const tail = rawKey.slice(dot + 1)
    if (UNSAFE.has(head) || UNSAFE.has(tail) || tail === '') continue
    let nested = result[head]
    if (typeof nested !== 'object' || nested === null || Array.isArray(nested)) nested = result[head] = {}
    add(nested as Record<string, unknown>, tail, value)
  }
  return result as Record<string, QueryValue>
}
