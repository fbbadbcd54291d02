/**
 * A raw Server-Sent Events reader for the e2e suite: `fetch` + the response's ReadableStream,
 * parsed line by line (`id:`, `data:`, `event:`, comments), so tests can see exactly what goes on
 * the wire: frame ids, unnamed data frames, keep-alives, and the moment the server ends a stream.
 */

export interface SseFrame {
  /** Value of this frame's own `id:` line; undefined when the frame carried none. */
  id: string | undefined
  /** The `event:` name, if any (the official client only consumes unnamed frames). */
  event: string | undefined
  /** The `data:` lines joined with "\n". */
  data: string
  /** `data` parsed as JSON, or undefined if it is not JSON. */
  json: unknown
  /** Every raw line of the frame, for assertions on the exact wire format. */
  lines: string[]
}

/** A `{type, data}` frame as the Chat API sends it. */
export interface SignalFrame {
  id: string | undefined
  type: string
  data: Record<string, unknown>
}

export class SseTimeoutError extends Error {}

export interface OpenOptions {
  headers?: Record<string, string>
  /** Time allowed for the status line and headers to arrive. */
  timeoutMs?: number
}

export class SseStream {
  /** Every frame received so far, in order. */
  readonly frames: SseFrame[] = []
  /** Comment lines (`: …`) received so far. */
  readonly comments: string[] = []
  private cursor = 0
  private ended = false
  private failure: unknown
  private wake: (() => void) | undefined
  private readonly done: Promise<void>

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    this.done = response.ok && response.body ? this.pump(response.body) : Promise.resolve().then(() => this.finish())
  }

  /**
   * Opens `url` with `accept: text/event-stream` and the given headers. Resolves when the status
   * line and headers have arrived (like the official client's `open`), whatever the status.
   */
  static async open(url: string, options: OpenOptions = {}): Promise<SseStream> {
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(new SseTimeoutError(`no response headers from ${url} within ${options.timeoutMs ?? 5000} ms`)), options.timeoutMs ?? 5000)
    try {
      const response = await fetch(url, {
        headers: { accept: 'text/event-stream', 'cache-control': 'no-cache', ...options.headers },
        signal: abort.signal,
      })
      return new SseStream(response, abort)
    } finally {
      clearTimeout(timer)
    }
  }

  get status(): number {
    return this.response.status
  }

  /** True once the server ended the response (or the reader was closed). */
  get isEnded(): boolean {
    return this.ended
  }

  private finish(error?: unknown): void {
    this.ended = true
    if (error !== undefined) this.failure = error
    this.notify()
  }

  private notify(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader()
    const decoder = new TextDecoder()
    let buffer = ''
    let lines: string[] = []
    let id: string | undefined
    let event: string | undefined
    let data: string[] = []
    const dispatch = () => {
      if (data.length > 0) {
        const text = data.join('\n')
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        this.frames.push({ id, event, data: text, json, lines })
        this.notify()
      }
      lines = []
      id = undefined
      event = undefined
      data = []
    }
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let match: RegExpExecArray | null
        while ((match = /\r\n|\r|\n/.exec(buffer)) !== null) {
          const line = buffer.slice(0, match.index)
          buffer = buffer.slice(match.index + match[0].length)
          if (line === '') {
            dispatch()
            continue
          }
          if (line.startsWith(':')) {
            this.comments.push(line)
            continue
          }
          lines.push(line)
          const colon = line.indexOf(':')
          const field = colon === -1 ? line : line.slice(0, colon)
          let value = colon === -1 ? '' : line.slice(colon + 1)
          if (value.startsWith(' ')) value = value.slice(1)
          if (field === 'id') id = value
          else if (field === 'data') data.push(value)
          else if (field === 'event') event = value
        }
      }
      this.finish()
    } catch (err) {
      this.finish(this.abort.signal.aborted ? undefined : err)
    }
  }

  /** The next frame not yet consumed by next()/nextSignal(); rejects on timeout or when the stream ends first. */
  async next(timeoutMs = 5000): Promise<SseFrame> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const frame = this.frames[this.cursor]
      if (frame) {
        this.cursor++
        return frame
      }
      if (this.ended) {
        throw new Error(`SSE stream ended before the next frame${this.failure ? `: ${String(this.failure)}` : ''}`)
      }
      const left = deadline - Date.now()
      if (left <= 0) throw new SseTimeoutError(`no SSE frame within ${timeoutMs} ms`)
      await this.waitForChange(left)
    }
  }

  /** The next `{type, data}` frame that is not a keep-alive ping. */
  async nextSignal(timeoutMs = 5000): Promise<SignalFrame> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const frame = await this.next(Math.max(1, deadline - Date.now()))
      const signal = asSignal(frame)
      if (signal && signal.type !== 'ping') return signal
    }
  }

  /** The next `count` non-ping signals, in order. */
  async signals(count: number, timeoutMs = 5000): Promise<SignalFrame[]> {
    const deadline = Date.now() + timeoutMs
    const out: SignalFrame[] = []
    while (out.length < count) out.push(await this.nextSignal(Math.max(1, deadline - Date.now())))
    return out
  }

  /** Non-ping signals received so far (consumed or not). */
  allSignals(): SignalFrame[] {
    return this.frames.map(asSignal).filter((s): s is SignalFrame => s !== undefined && s.type !== 'ping')
  }

  /** Waits until `predicate` holds over the frames received so far. */
  async waitUntil(predicate: (frames: SseFrame[]) => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate(this.frames)) {
      if (this.ended) throw new Error('SSE stream ended before the condition held')
      const left = deadline - Date.now()
      if (left <= 0) throw new SseTimeoutError(`condition not met within ${timeoutMs} ms`)
      await this.waitForChange(left)
    }
  }

  /** Resolves when the server ends the stream; rejects if it is still open after `timeoutMs`. */
  async waitForEnd(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.ended) {
      const left = deadline - Date.now()
      if (left <= 0) throw new SseTimeoutError(`SSE stream still open after ${timeoutMs} ms`)
      await this.waitForChange(left)
    }
  }

  private waitForChange(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        if (this.wake === done) this.wake = undefined
        resolve()
      }, ms)
      const previous = this.wake
      const done = () => {
        clearTimeout(timer)
        previous?.()
        resolve()
      }
      this.wake = done
    })
  }

  /** Disconnects (client side) and waits for the reader to stop. */
  async close(): Promise<void> {
    if (!this.ended) this.abort.abort()
    await this.done.catch(() => undefined)
    if (!this.response.bodyUsed) await this.response.body?.cancel().catch(() => undefined)
  }
}

export function asSignal(frame: SseFrame): SignalFrame | undefined {
  const json = frame.json
  if (typeof json !== 'object' || json === null) return undefined
  const { type, data } = json as { type?: unknown; data?: unknown }
  if (typeof type !== 'string' || typeof data !== 'object' || data === null) return undefined
  return { id: frame.id, type, data: data as Record<string, unknown> }
}

/** Opens `{apiUrl}/conversations/{id}/listen` the way the official client does (x-user-key header). */
export function listenRaw(apiUrl: string, conversationId: string, userKey: string, extraHeaders: Record<string, string> = {}, query = ''): Promise<SseStream> {
  return SseStream.open(`${apiUrl}/conversations/${conversationId}/listen${query}`, { headers: { 'x-user-key': userKey, ...extraHeaders } })
}
