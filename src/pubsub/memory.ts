import type { PubSub, PubSubHandler } from './pubsub.js'

/** In-process pub/sub for the single-process embedded mode. */
export class MemoryPubSub implements PubSub {
  private readonly channels = new Map<string, Set<PubSubHandler>>()

  async publish(channel: string, message: string): Promise<void> {
    const handlers = this.channels.get(channel)
    if (!handlers) return
    for (const handler of [...handlers]) {
      try {
        handler(message)
      } catch {
        // A failing subscriber must not stop delivery to the others.
      }
    }
  }

  async subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>> {
    let handlers = this.channels.get(channel)
    if (!handlers) this.channels.set(channel, (handlers = new Set()))
    handlers.add(handler)
    return async () => {
      handlers.delete(handler)
      if (handlers.size === 0 && this.channels.get(channel) === handlers) this.channels.delete(channel)
    }
  }

  /** Number of live subscriptions, for tests and metrics. */
  subscriptionCount(): number {
    let n = 0
    for (const set of this.channels.values()) n += set.size
    return n
  }

  async close(): Promise<void> {
    this.channels.clear()
  }
}
