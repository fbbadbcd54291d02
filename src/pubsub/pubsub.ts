/**
 * Notifications between the code that writes conversation signals and the streams that deliver
 * them. Messages are small (ids and sequence numbers, never bodies) so that PostgreSQL
 * LISTEN/NOTIFY, with its 8000-byte cap, can carry them too; listeners read bodies from the store.
 */
export type PubSubHandler = (message: string) => void

export interface PubSub {
  publish(channel: string, message: string): Promise<void>
  /** Returns a function that removes this subscription. */
  subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>>
  close(): Promise<void>
  /**
   * Distributed implementations lose what was published while their connection was down: after a
   * reconnect, subscribers re-read the store. Returns a function that removes the listener.
   */
  onReconnect?(listener: () => void): () => void
}
