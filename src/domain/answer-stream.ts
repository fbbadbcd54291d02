/**
 * A reply being produced by a model, on its way to the conversation's listeners (issue #29 item 3): its pieces as
 * Botpress's `message_stream_delta` signals (gathered briefly, numbered, in order), or `message_stream_abort` when it
 * is given up. The final message, carrying the stream's id as `metadata.streamId`, completes it (src/http/sse.ts).
 * Used by knowledge answers and the agent card.
 */
import type { PubSub } from '../pubsub/pubsub.js'
import { publishStreamSignal, type StreamSignal } from './conversation-stream.js'

/** Where an answer's pieces go while it is produced: the conversation's listeners, under the final message's id. */
export interface AnswerStream {
  integrationId: string
  conversationId: string
  /** The id of the message the answer will be (the stream's id, as Botpress's `message_stream_*` signals have it). */
  streamId: string
  /** The user id the bot's messages have in the conversation. */
  userId: string
}

/** Pieces are gathered this long before they go out: a model's token-sized pieces would be one frame (and, on PostgreSQL, one NOTIFY) each. */
const DELTA_COALESCE_MS = 30

/** An answer's pieces on their way to the conversation's listeners: gathered briefly, numbered, in order. */
export class StreamPieces {
  started = false
  private sequence = 0
  private pending = ''
  private timer: NodeJS.Timeout | undefined
  private sending: Promise<void> = Promise.resolve()

  constructor(
    private readonly pubsub: PubSub,
    private readonly stream: AnswerStream,
    private readonly clock: () => number,
  ) {}

  add(text: string): void {
    this.pending += text
    this.timer ??= setTimeout(() => void this.flush(), DELTA_COALESCE_MS)
  }

  flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.pending !== '') {
      const delta = this.pending
      this.pending = ''
      this.started = true
      this.send({
        type: 'message_stream_delta', streamId: this.stream.streamId, conversationId: this.stream.conversationId, userId: this.stream.userId,
        createdAt: new Date(this.clock()).toISOString(), sequence: this.sequence++, delta,
      })
    }
    return this.sending
  }

  async abort(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending = ''
    if (this.started) this.send({ type: 'message_stream_abort', streamId: this.stream.streamId, conversationId: this.stream.conversationId })
    await this.sending
  }

  private send(signal: StreamSignal): void {
    // One after the other, so that they arrive in order on every instance.
    this.sending = this.sending.then(() => publishStreamSignal(this.pubsub, this.stream.integrationId, this.stream.conversationId, signal)).catch(() => {})
  }
}
