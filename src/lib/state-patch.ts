type Obj<V> = { [key: string]: V }

/**
 * What a turn changed in one state object, at the granularity of its top-level keys: the keys it set
 * (added or given another value) and the keys it removed. Applying the changes rather than the whole
 * object keeps what concurrent turns of other conversations wrote to other keys of the same user or
 * bot state (docs/bot-code.md: "what user code changed during the turn is saved").
 */
export interface StatePatch<V = unknown> { set: Obj<V>; unset: string[] }

/** The changes from `before` to `after` (values compared as JSON). */
export function diffState<V>(before: Obj<V>, after: Obj<V>): StatePatch<V> {
  const set: Obj<V> = {}
  const unset: string[] = []
  for (const key of Object.keys(after)) {
    if (!Object.hasOwn(before, key) || JSON.stringify(before[key]) !== JSON.stringify(after[key])) put(set, key, after[key]!)
  }
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) unset.push(key)
  return { set, unset }
}

export function isEmptyPatch(patch: StatePatch<unknown>): boolean {
  return patch.unset.length === 0 && Object.keys(patch.set).length === 0
}

/** `current` with the patch applied (a new object; `current` is left as it is). */
export function applyStatePatch<V>(current: Obj<V> | undefined, patch: StatePatch<V>): Obj<V> {
  const next: Obj<V> = { ...(current ?? {}) }
  for (const key of patch.unset) delete next[key]
  for (const [key, value] of Object.entries(patch.set)) put(next, key, value)
  return next
}

/** Sets a key as data: a key such as __proto__ never becomes the object's prototype. */
function put<V>(obj: Obj<V>, key: string, value: V): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}
