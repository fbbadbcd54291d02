import type { PubSub } from '../pubsub/pubsub.js'
import type { ConversationRow, SignalRecord, Store, UserRow } from '../store/store.js'
import type { ChatService } from './chat-service.js'
import { conversationChannel } from './conversation-log.js'

const REPLAY_BATCH = 200

/**
 * The typing indicator travels on the conversation's channel, next to the "changed" pokes: `typing:1:<ttlMs>`
 * (a bot turn is running, or bot code said so; lasts ttlMs unless renewed) or `typing:0`. It is never stored: a
 * stream that opens later learns it from the next renewal.
 */
function typingMessage(active: boolean, ttlMs = 0): string {
  return active ? `typing:1:${Math.max(0, Math.trunc(ttlMs))}` : 'typing:0'
}

/** Tells the conversation's streams (on every instance) that the bot is typing, for ttlMs unless renewed, or stopped. */
export function publishTyping(pubsub: PubSub, integrationId: string, conversationId: string, active: boolean, ttlMs = 0): Promise<void> {
  return pubsub.publish(conversationChannel(integrationId, conversationId), typingMessage(active, ttlMs))
}

export function parseTypingMessage(message: string): { active: boolean; ttlMs: number } | undefined {
  if (message === 'typing:0') return { active: false, ttlMs: 0 }
  const match = /^typing:1:(\d{1,9})$/.exec(message)
  return match ? { active: true, ttlMs: Number(match[1]) } : undefined
}

/**
 * A model's reply as it is produced (Botpress's Chat API stream signals, llm-wire.md §5): pieces of text numbered from
 * 0, then the reply as one normal message whose `metadata.streamId` is the stream's id (the listener sends
 * `message_stream_complete` before its `message_created`), or an abort. Like typing, they travel on the conversation's
 * channel as `stream:<json>` and are never stored: a listener that connects later gets the final message only.
 */
export type StreamSignal =
  | { type: 'message_stream_delta'; streamId: string; conversationId: string; userId: string; createdAt: string; sequence: number; delta: string }
  | { type: 'message_stream_abort'; streamId: string; conversationId: string }

export function publishStreamSignal(pubsub: PubSub, integrationId: string, conversationId: string, signal: StreamSignal): Promise<void> {
  return pubsub.publish(conversationChannel(integrationId, conversationId), `stream:${JSON.stringify(signal)}`)
}

export function parseStreamMessage(message: string): StreamSignal | undefined {
  try {
    const signal = JSON.parse(message.slice('stream:'.length)) as StreamSignal
    return signal.type === 'message_stream_delta' || signal.type === 'message_stream_abort' ? signal : undefined
  } catch {
    return undefined
  }
}

/** Whether `userId` wrote this signal (its message or event): what the replay window sends a listener. */
function writtenBy(signal: SignalRecord, userId: string | undefined): boolean {
  if (userId === undefined) return false
  if (signal.kind === 'message_created') return signal.message.userId === userId
  if (signal.kind === 'event_created') return signal.event.userId === userId
  return false
}

export interface StreamSink {
  /** Access was granted: called once, before any signal (the HTTP layer sends its headers here). */
  open(stream: OpenStream): void
  /** Delivers one signal; `seq` is the conversation sequence number (the SSE event id). */
  send(signal: SignalRecord): void
  /**
   * Between two replay pages: a promise when the client has not taken what was sent yet (resolved
   * once it has, or once it is gone), undefined when it has. A replay then never buffers more than
   * about a page ahead of a slow client, nor holds the event loop for a whole history.
   */
  backlog?(): Promise<void> | undefined
  /** Before a pass: a promise while frames may not go out yet (the HTTP layer holds a new stream's first frames briefly). */
  ready?(): Promise<void> | undefined
  /** After a pass: a promise while what was sent has not reached the socket yet (the HTTP layer corks until the next tick). */
  flushed?(): Promise<void> | undefined
  /** The stream is over (participant removed, conversation deleted, server closing). */
  end(reason: string): void
  /** Someone (the bot) started or stopped typing in the conversation; active for ttlMs unless renewed. */
  typing?(active: boolean, ttlMs: number): void
  /** A piece of a reply being produced, or its abort (StreamSignal). */
  streaming?(signal: StreamSignal): void
}

export interface OpenStream {
  /** Sequence number of the last signal delivered (or the starting point). */
  readonly position: number
  /** Stops following (the client went away). */
  close(): Promise<void>
  /** Stops following and ends the response (server shutdown). */
  end(reason: string): Promise<void>
}

export interface ConversationStreamOptions {
  /** A Chat API listener without Last-Event-ID also gets the signals of this window before it connected, in ms (0: none). */
  replayMs?: number
  clock?: () => number
}

/**
 * Follows one conversation for one participant (or a workspace member). Notifications only say "something changed";
 * the stream then reads every signal after its position from the store, in sequence order.
 * That makes delivery gap-free and ordered, makes Last-Event-ID replay the same code path as
 * live delivery, and works unchanged when notifications cross instances.
 */
export class ConversationStreams {
  private readonly streams = new Set<OpenStream>()
  private readonly replayMs: number
  private readonly clock: () => number

  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly chat: ChatService,
    options: ConversationStreamOptions = {},
  ) {
    this.replayMs = options.replayMs ?? 0
    this.clock = options.clock ?? Date.now
  }

  get openCount(): number {
    return this.streams.size
  }

  /**
   * Checks access (throws 403/404 before anything is sent), subscribes, then delivers every
   * signal after `lastEventId` (replay, exact), or, when it is absent, those of the replay window and
   * what comes next: a client that writes and then listens sees its own write (docs/chat-api.md). `window: false`:
   * only what comes next (a client that opens the stream and then reads the history, as Parley's webchat does).
   */
  async follow(user: UserRow, conversationId: string, lastEventId: number | undefined, sink: StreamSink, options: { window?: boolean } = {}): Promise<OpenStream> {
    await this.chat.getConversation(user, conversationId)
    const window = options.window ?? true
    const from = lastEventId ?? (window && this.replayMs > 0 ? { since: this.clock() - this.replayMs } : undefined)
    return this.followIn(user.integrationId, conversationId, user.id, from, sink)
  }

  /**
   * Follows a conversation for a workspace member (the console's live transcript): no participant to check or
   * remove; the caller has checked that the conversation is the member's bot's (ConversationArchiveService.streamTarget).
   * No replay window: the console loads the transcript, then follows what comes after it.
   */
  followAsMember(target: { integrationId: string; conversationId: string }, lastEventId: number | undefined, sink: StreamSink): Promise<OpenStream> {
    return this.followIn(target.integrationId, target.conversationId, undefined, lastEventId, sink)
  }

  /** `from`: after this sequence number (Last-Event-ID), from a time (the replay window), or only what comes next. */
  private async followIn(integrationId: string, conversationId: string, participantId: string | undefined, from: number | { since: number } | undefined, sink: StreamSink): Promise<OpenStream> {
    let closed = false
    let pumping = false
    let again = false
    let running: Promise<void> = Promise.resolve()
    let position = 0
    // The conversation's sequence when the stream opened (access was granted): a removal of this participant
    // before it is history (a replayed one), not the end of this stream.
    let openedAt = 0
    const windowed = from !== undefined && typeof from !== 'number'
    let openedAs: ConversationRow | undefined
    let unsubscribe: (() => Promise<void>) | undefined
    let stopReconnectListener: (() => void) | undefined

    const finish = async (reason: string | undefined) => {
      if (closed) return
      closed = true
      this.streams.delete(handle)
      if (reason !== undefined) sink.end(reason)
      stopReconnectListener?.()
      await unsubscribe?.()
    }

    // Only a 'deleted' notification makes the stream look up whether the conversation still exists.
    let checkExists = false
    /**
     * Reads and sends what is new. Resolves once a pass that started after this call has sent what it read: a
     * poke during a pass asks for one more, and gets the promise of the whole run (the publisher waits on it).
     */
    const pump = (deleted = false): Promise<void> => {
      checkExists ||= deleted
      if (pumping) {
        again = true
        return running
      }
      pumping = true
      running = drain()
      return running
    }
    // After a 'deleted' poke, before reading: a conversation deleted and created again under the same id (a stream
    // held before its first frames is still there) is another conversation, and this stream ends.
    const gone = async (): Promise<boolean> => {
      const now = await this.store.getConversation(integrationId, conversationId)
      if (!now || now.createdAt !== openedAs?.createdAt || now.ownerId !== openedAs.ownerId) return true
      return participantId !== undefined && !(await this.store.isParticipant(integrationId, conversationId, participantId))
    }
    const drain = async (): Promise<void> => {
      try {
        await sink.ready?.()
        do {
          again = false
          if (checkExists && (await gone())) {
            await finish('conversation deleted')
            return
          }
          let batch: SignalRecord[]
          do {
            if (closed) return
            batch = await this.store.signalsSince(integrationId, conversationId, position, REPLAY_BATCH)
            for (const signal of batch) {
              if (closed) return
              position = signal.seq
              // The replay window gives a listener its own writes only (read your writes): another user's or the
              // bot's signal from before it connected is not news to send it as live.
              if (windowed && signal.seq <= openedAt && !writtenBy(signal, participantId)) continue
              sink.send(signal)
              if (signal.kind === 'participant_removed' && participantId !== undefined && signal.participantId === participantId && signal.seq > openedAt) {
                await finish('participant removed')
                return
              }
            }
            if (batch.length === REPLAY_BATCH) {
              // More to replay: let the client take this page first, and other work run meanwhile
              // (on SQLite a read answers without giving the event loop a turn).
              await (sink.backlog?.() ?? new Promise<void>((resolve) => setImmediate(resolve)))
            }
          } while (batch.length === REPLAY_BATCH)
          // The pass is done once its frames are on the socket: a local writer waiting for this pump (the pub/sub)
          // answers after them. A client that does not read holds this stream's next pass, never the writer.
          await sink.flushed?.()
        } while (again)
      } catch {
        await finish('stream failed')
      } finally {
        pumping = false
      }
    }

    const handle: OpenStream = {
      get position() {
        return position
      },
      close: () => finish(undefined),
      end: (reason: string) => finish(reason),
    }
    // The starting position is read before subscribing: anything committed after this read has a
    // higher sequence number and is found by the first pump, so nothing is missed or replayed twice.
    const conversation = await this.store.getConversation(integrationId, conversationId)
    openedAs = conversation
    const current = conversation?.lastSeq ?? 0
    openedAt = current
    position = from === undefined ? current
      : typeof from === 'number' ? Math.min(Math.max(0, from), current)
      : current === 0 ? 0 : Math.min(current, await this.store.signalSeqBefore(integrationId, conversationId, from.since))
    this.streams.add(handle)
    sink.open(handle)
    unsubscribe = await this.pubsub.subscribe(conversationChannel(integrationId, conversationId), (message) => {
      if (message.startsWith('typing:')) {
        const typing = parseTypingMessage(message)
        if (typing) sink.typing?.(typing.active, typing.ttlMs)
        return undefined
      }
      if (message.startsWith('stream:')) {
        const signal = parseStreamMessage(message)
        if (signal) sink.streaming?.(signal)
        return undefined
      }
      // The pub/sub waits (briefly) for this: a local write answers once its signal is on this stream's socket.
      return pump(message === 'deleted')
    })
    // Pokes published while a distributed pub/sub was reconnecting are lost: re-read after a reconnect.
    stopReconnectListener = this.pubsub.onReconnect?.(() => void pump(true))
    if (closed) {
      await unsubscribe()
      return handle
    }
    void pump()
    return handle
  }

  /** Ends every open stream (graceful shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.streams].map((s) => s.end('server closing')))
  }
}
