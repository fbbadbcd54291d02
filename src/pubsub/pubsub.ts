/**
 * Notifications between the code that writes conversation signals and the streams that deliver
 * them. Messages are small (ids and sequence numbers, never bodies) so that PostgreSQL
 * LISTEN/NOTIFY, with its 8000-byte cap, can carry them too; listeners read bodies from the store.
 */
/** A handler that answers a promise (a stream writing what changed) is waited for by the local publish. */
export type PubSubHandler = (message: string) => unknown

/**
 * How long a publish waits, at most, for this process's subscribers to handle a message (a conversation's streams
 * reading and writing the new signal): a write answers after its local streams have sent it, but a slow store or a
 * stream paging a long replay never holds the writer longer than this. Live frames never wait for a client to read.
 */
export const LOCAL_DELIVERY_WAIT_MS = 100

/** Calls every handler with the message (a failing one does not stop the others); the promises of those that answered one (never rejecting). */
export function callHandlers(handlers: Iterable<PubSubHandler>, message: string): Promise<void>[] {
  const pending: Promise<void>[] = []
  for (const handler of [...handlers]) {
    try {
      const result = handler(message)
      if (result instanceof Promise) pending.push(result.then(() => {}, () => {}))
    } catch {
      // A failing subscriber must not stop delivery to the others.
    }
  }
  return pending
}

/**
 * callHandlers, then resolves once the handlers' promises have settled, or after `waitMs`, whichever comes first.
 * No timer unless a promise is pending.
 */
export async function deliverLocal(handlers: Iterable<PubSubHandler>, message: string, waitMs: number): Promise<void> {
  const pending = callHandlers(handlers, message)
  if (pending.length === 0) return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    Promise.all(pending),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs)
      timer.unref()
    }),
  ])
  clearTimeout(timer)
}

export interface PubSub {
  /** Delivers to every subscriber; resolves once this process's subscribers have handled it (at most LOCAL_DELIVERY_WAIT_MS). */
  publish(channel: string, message: string): Promise<void>
  /**
   * For a distributed pub/sub, a message already sent another way (the PostgreSQL store sends an append's
   * notifications in its own statement): this process's subscribers handle it now (awaited as publish does), and
   * the copy coming back through the database is not delivered to them again. `message` must name this one write
   * (conversationChanged's token), so that no other writer's copy is taken for it.
   */
  deliverLocally?(channel: string, message: string): Promise<void>
  /** Returns a function that removes this subscription. */
  subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>>
  close(): Promise<void>
  /**
   * Distributed implementations lose what was published while their connection was down: after a
   * reconnect, subscribers re-read the store. Returns a function that removes the listener.
   */
  onReconnect?(listener: () => void): () => void
}
