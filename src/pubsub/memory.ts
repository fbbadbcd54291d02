import { deliverLocal, LOCAL_DELIVERY_WAIT_MS, type PubSub, type PubSubHandler } from './pubsub.js'

/**
 * In-process pub/sub for the single-process embedded mode. A publish resolves once the subscribers have handled
 * the message (those that answer a promise, for at most `deliveryWaitMs`): a write's open streams have sent its
 * signal before the write answers.
 */
export class MemoryPubSub implements PubSub {
  private readonly channels = new Map<string, Set<PubSubHandler>>()
  private readonly deliveryWaitMs: number

  constructor(options: { deliveryWaitMs?: number } = {}) {
    this.deliveryWaitMs = options.deliveryWaitMs ?? LOCAL_DELIVERY_WAIT_MS
  }

  async publish(channel: string, message: string): Promise<void> {
    const handlers = this.channels.get(channel)
    if (handlers) await deliverLocal(handlers, message, this.deliveryWaitMs)
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
