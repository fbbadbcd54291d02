import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { signalView } from '../domain/chat-views.js'
import type { StreamSink } from '../domain/conversation-stream.js'
import { WebchatDrafts, webchatSignal, webchatStatusSignal } from '../domain/webchat-api-views.js'

/**
 * How long after the headers a stream's first frames are held. @botpress/chat's listener attaches its message
 * handler a few microtasks after its EventSource's 'open' event, so a frame that reaches it in the same read as the
 * headers is dropped (measured: 8 of 40 replayed frames lost without the hold, 0 of 40 with 30 ms).
 */
const FIRST_FRAME_DELAY_MS = 30

/**
 * A minimal Server-Sent Events writer over the raw response, following the rules the official
 * clients need (wire-compat §1.7): status 200 and headers at once, unnamed `data:` frames only,
 * and a data frame as keep-alive (comments do not reset the client's 60 s watchdog).
 */
export class SseWriter {
  private closed = false
  private keepAlive: NodeJS.Timeout | undefined
  private typingTimer: NodeJS.Timeout | undefined
  private position: () => number = () => 0
  private firstFrameAt = 0
  /** Frames written whose write has not completed yet, and who waits for them (flushed()). */
  private unflushed = 0
  private flushWaiters: (() => void)[] = []
  private readonly onFlushed = () => {
    if (--this.unflushed === 0) this.releaseFlushWaiters()
  }

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {}

  /** Sends the status line and headers now (the client's `listen()` resolves on them). */
  open(keepAliveMs: number, position: () => number, onClose: () => void): void {
    this.reply.hijack()
    const raw = this.reply.raw
    // Headers set by hooks (CORS, request id) are on the reply, which hijack() bypasses: copy them.
    const inherited = this.reply.getHeaders() as OutgoingHttpHeaders
    raw.writeHead(200, {
      ...inherited,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    })
    raw.flushHeaders()
    this.firstFrameAt = Date.now() + FIRST_FRAME_DELAY_MS
    this.position = position
    if (typeof raw.socket?.setNoDelay === "function") raw.socket.setNoDelay(true)
    this.keepAlive = setInterval(() => this.write({ type: 'ping', data: {} }, position()), keepAliveMs)
    this.keepAlive.unref()
    const cleanup = () => {
      if (this.closed) return
      this.closed = true
      clearInterval(this.keepAlive)
      clearTimeout(this.typingTimer)
      this.releaseFlushWaiters()
      onClose()
    }
    this.request.raw.on('close', cleanup)
    raw.on('close', cleanup)
    raw.on('error', cleanup)
  }

  /**
   * The typing indicator, carried by the keep-alive frame: `{"type":"ping","data":{"typing":true|false}}`. A new
   * signal type would reach @botpress/chat's listener as an `unknown` frame; the ping is one it already receives
   * and ignores (README: Typing indicator). Active for `ttlMs` unless renewed; then a `typing: false` frame.
   */
  typing(active: boolean, ttlMs: number): void {
    if (this.closed) return
    const wasActive = this.typingTimer !== undefined
    clearTimeout(this.typingTimer)
    this.typingTimer = undefined
    if (active) {
      this.typingTimer = setTimeout(() => this.typing(false, 0), Math.max(1, ttlMs))
      this.typingTimer.unref()
    } else if (!wasActive) {
      return
    }
    this.write({ type: 'ping', data: { typing: active } }, this.position())
  }

  /** One frame. `id` must be a plain number so it can never smuggle CR/LF into the stream. */
  write(data: unknown, id?: number): void {
    if (this.closed || this.reply.raw.writableEnded) return
    const idLine = id === undefined ? '' : `id: ${Math.trunc(id)}\n`
    // JSON.stringify never emits raw newlines, so one data: line carries the whole frame.
    this.unflushed++
    this.reply.raw.write(`${idLine}data: ${JSON.stringify(data)}\n\n`, this.onFlushed)
  }

  /** Undefined once frames may go out, else a promise resolved when they may (FIRST_FRAME_DELAY_MS after the headers). */
  ready(): Promise<void> | undefined {
    const wait = this.firstFrameAt - Date.now()
    if (this.closed || wait <= 0) return undefined
    return new Promise<void>((resolve) => setTimeout(resolve, wait).unref())
  }

  /**
   * Undefined when every frame written so far has gone to the socket, else a promise resolved once they have
   * (or the connection closed). Node corks a chunked response until the next tick: without this, an answer on
   * another connection could leave first. A client that does not read keeps it pending: callers bound their wait.
   */
  flushed(): Promise<void> | undefined {
    if (this.closed || this.unflushed === 0) return undefined
    return new Promise<void>((resolve) => this.flushWaiters.push(resolve))
  }

  private releaseFlushWaiters(): void {
    const waiters = this.flushWaiters
    this.flushWaiters = []
    for (const resolve of waiters) resolve()
  }

  /** A promise while the response's buffer is over its high-water mark (until it drains or the connection closes), else undefined. */
  backlog(): Promise<void> | undefined {
    const raw = this.reply.raw
    if (this.closed || raw.writableEnded || !raw.writableNeedDrain) return undefined
    return new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done)
        raw.off('close', done)
        resolve()
      }
      raw.on('drain', done)
      raw.on('close', done)
    })
  }

  end(): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.keepAlive)
    clearTimeout(this.typingTimer)
    this.releaseFlushWaiters()
    this.reply.raw.end()
  }
}

/** A conversation stream's sink over an SSE writer: the listen routes of the Chat API and of the console. */
export function signalSink(writer: SseWriter, keepAliveMs: number): StreamSink {
  return {
    open: (stream) => writer.open(keepAliveMs, () => stream.position, () => void stream.close()),
    send: (signal) => {
      const view = signalView(signal)
      // A reply that was streamed (its pieces went out as message_stream_delta): the stream's end, then the message.
      const streamId = signal.kind === 'message_created' ? signal.message.metadata?.streamId : undefined
      if (typeof streamId === 'string') writer.write({ type: 'message_stream_complete', data: { streamId, message: view.data } })
      writer.write(view, signal.seq)
    },
    backlog: () => writer.backlog(),
    ready: () => writer.ready(),
    flushed: () => writer.flushed(),
    end: () => writer.end(),
    typing: (active, ttlMs) => writer.typing(active, ttlMs),
    streaming: (signal) => {
      const { type, ...data } = signal
      writer.write({ type, data })
    },
  }
}

/**
 * The official webchat's stream (Botpress's webchat API, llm-wire.md §4): `init` first when given (the /initialize
 * stream), then its signals (webchat-api-views.ts webchatSignal, and webchatStatusSignal after a user's message),
 * `typing_started`/`typing_stopped`, and a streamed reply as a growing draft (`message_updated`). Unnamed data frames,
 * as for the Chat API.
 */
export function webchatSink(writer: SseWriter, keepAliveMs: number, init?: { type: 'init'; data: unknown }): StreamSink {
  const drafts = new WebchatDrafts()
  return {
    open: (stream) => {
      writer.open(keepAliveMs, () => stream.position, () => void stream.close())
      if (init) writer.write(init)
    },
    send: (signal) => {
      if (signal.kind === 'message_created') drafts.done(signal.message.metadata?.streamId)
      const view = webchatSignal(signal)
      if (view) writer.write(view, signal.seq)
      const status = webchatStatusSignal(signal)
      if (status) writer.write(status)
    },
    backlog: () => writer.backlog(),
    ready: () => writer.ready(),
    flushed: () => writer.flushed(),
    end: () => writer.end(),
    typing: (active, ttlMs) => writer.write(active ? { type: 'typing_started', data: { timeout: ttlMs } } : { type: 'typing_stopped', data: {} }),
    streaming: (signal) => {
      const draft = drafts.apply(signal)
      if (draft) writer.write(draft)
    },
  }
}
