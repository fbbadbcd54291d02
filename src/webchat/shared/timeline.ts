import type { Message } from './types.js'

/** Orders messages by createdAt, then id (ISO timestamps of one format compare as strings). */
export function compareMessages(a: Pick<Message, 'createdAt' | 'id'>, b: Pick<Message, 'createdAt' | 'id'>): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/**
 * The messages of one conversation, each once, in order, whatever order and however many times they arrive
 * (the stream, its replay after a reconnect, and listMessages overlap on purpose).
 */
export class Timeline<M extends Message = Message> {
  private readonly items: M[] = []
  private readonly ids = new Set<string>()

  get size(): number {
    return this.items.length
  }

  get messages(): readonly M[] {
    return this.items
  }

  has(id: string): boolean {
    return this.ids.has(id)
  }

  /** Adds a message; returns its index, or -1 when it was already there. */
  add(message: M): number {
    if (this.ids.has(message.id)) return -1
    this.ids.add(message.id)
    // Messages nearly always arrive in order: search from the end.
    let index = this.items.length
    while (index > 0 && compareMessages(this.items[index - 1]!, message) > 0) index--
    this.items.splice(index, 0, message)
    return index
  }

  /** Removes a message; returns the index it had, or -1. */
  remove(id: string): number {
    if (!this.ids.delete(id)) return -1
    const index = this.items.findIndex((m) => m.id === id)
    if (index >= 0) this.items.splice(index, 1)
    return index
  }
}
