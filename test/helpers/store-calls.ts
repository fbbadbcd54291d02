import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'

/**
 * Counts the calls the app makes to the Store's own methods (not its parts such as `store.handoffs`), as
 * bench/turns.ts's profile does: give `wrap` to startParley's `wrapStore`; calls are counted between start() and
 * stop(). The store's calls to itself are not counted (they go to the store, not through the proxy).
 */
export class StoreCalls {
  private readonly calls = new Map<string, number>()
  private counting = false

  readonly wrap = (store: KyselyStore): KyselyStore => new Proxy(store, {
    get: (target, prop, receiver) => {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function' || typeof prop !== 'string') return value
      return (...args: unknown[]) => {
        if (this.counting) this.calls.set(prop, (this.calls.get(prop) ?? 0) + 1)
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })

  start(): void {
    this.calls.clear()
    this.counting = true
  }

  /** The calls counted since start(), by method name (sorted), and their total. */
  stop(): { total: number; byMethod: Record<string, number> } {
    this.counting = false
    const byMethod = Object.fromEntries([...this.calls.entries()].sort(([a], [b]) => a.localeCompare(b)))
    return { total: [...this.calls.values()].reduce((a, b) => a + b, 0), byMethod }
  }
}
