import { randomBytes } from 'node:crypto'
import type { PubSub } from '../pubsub/pubsub.js'
import { errors } from '../lib/errors.js'
import type { AppendNotification, Appended, EventRow, IntegrationRow, JsonObject, MessageRow, NewEvent, NewMessage, Store } from '../store/store.js'

/** The pub/sub channel of a conversation's changes (appends, typing, streamed drafts), which its streams listen on. */
export const conversationChannel = (integrationId: string, conversationId: string) => `conv:${integrationId}:${conversationId}`

/** Names each change notification of this process: `changed:<process>.<n>` (streams read any message but `deleted` and `typing:…` as a poke). */
const changeTokens = { process: randomBytes(6).toString('base64url'), next: 0 }

/**
 * The notification of a change to a conversation: its streams wake up and read what is new from the store. Each
 * one is named (PubSub.deliverLocally tells its own copy from another writer's by it).
 */
export const conversationChanged = (integrationId: string, conversationId: string): AppendNotification =>
  ({ channel: conversationChannel(integrationId, conversationId), message: `changed:${changeTokens.process}.${++changeTokens.next}` })

/**
 * A change that is not an append (a participant, a deleted message or conversation): published, and this instance's
 * streams have handled it when it resolves, as an append's (ConversationLog). Never fails: the write is committed already.
 */
export async function publishChange(pubsub: PubSub, integrationId: string, conversationId: string, message?: 'deleted'): Promise<void> {
  const n = message === undefined ? conversationChanged(integrationId, conversationId) : { channel: conversationChannel(integrationId, conversationId), message }
  await pubsub.publish(n.channel, n.message).catch(() => {})
  if (message === undefined) await pubsub.deliverLocally?.(n.channel, n.message).catch(() => {})
}

/**
 * Publishes an append's notifications, unless its store sent them with the append; either way this instance's
 * streams of the conversation have sent the new signal when it resolves (waiting at most a short cap; other
 * instances hear it asynchronously).
 */
export async function publishUnsent(store: Store, pubsub: PubSub, notify: readonly AppendNotification[]): Promise<void> {
  for (const n of notify) {
    if (!store.sendsAppendNotifications) await pubsub.publish(n.channel, n.message)
    else if (n.message.startsWith('changed:')) await pubsub.deliverLocally?.(n.channel, n.message)
  }
}

/** What an append left in the log: the row, and whether this call wrote it (false: an `ifAbsent` append found its id taken). */
export interface Logged<T> { row: T; created: boolean }

/**
 * The one append path of a conversation's log (its messages and events): the only caller of the store's
 * appendMessage and appendEvent (test/unit/one-append-path.test.ts), used by the Chat API (ChatService), the
 * Runtime API and bot code (BotChatService) and handoffs (HandoffService).
 *
 * An append with `ifAbsent` is idempotent by id: a second append of the same id (a turn run again after a crash,
 * a redelivered event, a handoff line written by two requests) writes nothing and answers the stored row, checked
 * inside the store's append statement or transaction, never by a read before it. Once an append is committed its
 * notifications go out (unless the store sent them itself); a lost one is not an error (streams and the runtime's
 * sweep read the store again). An append that did not happen (its conversation gone, its author not a
 * participant) answers undefined.
 */
export class ConversationLog {
  constructor(private readonly store: Store, private readonly pubsub: PubSub) {}

  appendMessage(message: NewMessage): Promise<Logged<MessageRow> | undefined> {
    return this.settle(this.store.appendMessage(message), message.notify)
  }

  appendEvent(event: NewEvent): Promise<Logged<EventRow> | undefined> {
    return this.settle(this.store.appendEvent(event), event.notify)
  }

  /** A custom event from the bot (sandboxed createEvent, `chat:sendEvent`), once per id; 404 when the conversation is gone. */
  async appendBotEvent(integration: IntegrationRow, conversationId: string, id: string, payload: JsonObject, now: number): Promise<Logged<EventRow>> {
    const logged = await this.appendEvent({
      id, integrationId: integration.id, conversationId, userId: integration.botId, isBot: true, payload,
      notify: [conversationChanged(integration.id, conversationId)], ifAbsent: true, now,
    })
    if (!logged) throw errors.notFound('Conversation', conversationId)
    return logged
  }

  private async settle<T extends object>(append: Promise<Appended<T> | undefined>, notify: readonly AppendNotification[] = []): Promise<Logged<T> | undefined> {
    const appended = await append
    if (!appended) return undefined
    if (appended.existing) {
      const { existing: _, ...row } = appended
      return { row: row as T, created: false }
    }
    await publishUnsent(this.store, this.pubsub, notify).catch(() => {})
    return { row: appended, created: true }
  }
}
