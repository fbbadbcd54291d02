/**
 * Server-Sent Events over fetch + ReadableStream (not EventSource: it cannot send `x-user-key`, and we want to
 * choose when and how to reconnect). Shared by the webchat and `parley chat`.
 */

export interface SseFrame {
  /** The frame's `id:` (undefined when it carried none). */
  id: string | undefined
  /** `data:` lines joined with "\n". */
  data: string
}

/** Incremental parser: feed decoded text, get complete frames (WHATWG rules: CR, LF or CRLF line ends). */
export class SseParser {
  private buffer = ''
  private data: string[] = []
  private id: string | undefined
  private sawField = false

  push(text: string): SseFrame[] {
    this.buffer += text
    const frames: SseFrame[] = []
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer)
      if (!match) break
      // A lone CR at the very end may be the first half of CRLF: wait for more text.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break
      const line = this.buffer.slice(0, match.index)
      this.buffer = this.buffer.slice(match.index + match[0].length)
      const frame = this.line(line)
      if (frame) frames.push(frame)
    }
    return frames
  }

  private line(line: string): SseFrame | undefined {
    if (line === '') {
      const frame = this.sawField && this.data.length > 0 ? { id: this.id, data: this.data.join('\n') } : undefined
      this.data = []
      this.id = undefined
      this.sawField = false
      return frame
    }
    if (line.startsWith(':')) return undefined // comment
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    this.sawField = true
    if (field === 'data') this.data.push(value)
    else if (field === 'id' && !value.includes('\0')) this.id = value
    return undefined
  }
}

export type StreamStatus = 'connecting' | 'open' | 'reconnecting' | 'stopped'

export interface ResilientStreamOptions {
  /** The stream's URL (read again before every attempt). */
  url: () => string
  /** Request headers of every attempt (the user key); `accept` and `last-event-id` are added. */
  headers: () => Record<string, string>
  onFrame: (frame: SseFrame) => void
  onStatus?: (status: StreamStatus, detail?: { attempt: number; delayMs?: number; error?: unknown }) => void
  /** Called each time a connection opens; `resumed` is false only for the very first. */
  onOpen?: (info: { resumed: boolean }) => void | Promise<void>
  /**
   * A 4xx answer (other than 408/429) will not fix itself by retrying: return true to retry anyway (e.g. after
   * re-authenticating), false to stop.
   */
  onRefused?: (status: number, body: string) => boolean | Promise<boolean>
  /** No byte for this long (the server sends a keep-alive every 2.5 s by default, PARLEY_SSE_KEEPALIVE_MS) means the connection is dead. */
  idleTimeoutMs?: number
  initialDelayMs?: number
  maxDelayMs?: number
  fetch?: typeof fetch
  /** For tests: the random source of the jitter. */
  random?: () => number
}

/**
 * A stream that stays connected: on a drop, an error status or silence it reconnects with exponential backoff
 * (with jitter), sending `Last-Event-ID` so the server replays what was missed.
 */
export class ResilientStream {
  /** The id of the last frame received; sent as `Last-Event-ID` on reconnect. */
  lastEventId: string | undefined
  private stopped = true
  private controller: AbortController | undefined
  private wakeUp: (() => void) | undefined
  private attempt = 0
  private opened = false
  private loop: Promise<void> | undefined

  constructor(private readonly options: ResilientStreamOptions) {}

  get running(): boolean {
    return !this.stopped
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.loop = this.run()
  }

  /** Stops and waits for the connection to be closed. */
  async stop(): Promise<void> {
    this.stopped = true
    this.controller?.abort()
    this.wakeUp?.()
    await this.loop
    this.options.onStatus?.('stopped', { attempt: this.attempt })
  }

  /** Skips the current backoff wait (e.g. the browser came back online). */
  retryNow(): void {
    this.wakeUp?.()
  }

  /** Drops the current connection and reconnects at once (resuming from `lastEventId`). */
  reconnect(): void {
    this.controller?.abort()
    this.wakeUp?.()
  }

  private delay(): number {
    const initial = this.options.initialDelayMs ?? 500
    const max = this.options.maxDelayMs ?? 15_000
    const base = Math.min(max, initial * 2 ** Math.min(this.attempt, 16))
    return Math.round(base * (0.5 + (this.options.random ?? Math.random)() * 0.5))
  }

  private async run(): Promise<void> {
    const doFetch = this.options.fetch ?? ((input, init) => fetch(input, init))
    while (!this.stopped) {
      this.options.onStatus?.(this.opened ? 'reconnecting' : 'connecting', { attempt: this.attempt })
      const controller = new AbortController()
      this.controller = controller
      let idle: ReturnType<typeof setTimeout> | undefined
      const idleMs = this.options.idleTimeoutMs ?? 45_000
      const arm = () => {
        if (idle !== undefined) clearTimeout(idle)
        idle = setTimeout(() => controller.abort(), idleMs)
      }
      let error: unknown
      try {
        arm()
        const response = await doFetch(this.options.url(), {
          headers: {
            ...this.options.headers(),
            accept: 'text/event-stream',
            ...(this.lastEventId !== undefined && { 'last-event-id': this.lastEventId }),
          },
          cache: 'no-store',
          signal: controller.signal,
        })
        if (!response.ok || !response.body) {
          const body = await response.text().catch(() => '')
          const permanent = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429
          if (permanent) {
            const retry = this.options.onRefused ? await this.options.onRefused(response.status, body) : false
            if (!retry) {
              this.stopped = true
              break
            }
            throw new Error(`stream refused with HTTP ${response.status}; retrying`)
          }
          throw new Error(`stream answered HTTP ${response.status}`)
        }
        const resumed = this.opened
        this.opened = true
        this.attempt = 0
        this.options.onStatus?.('open', { attempt: 0 })
        await this.options.onOpen?.({ resumed })
        const parser = new SseParser()
        const decoder = new TextDecoder()
        const reader = response.body.getReader()
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            arm()
            for (const frame of parser.push(decoder.decode(value, { stream: true }))) {
              if (frame.id !== undefined) this.lastEventId = frame.id
              this.options.onFrame(frame)
            }
          }
        } finally {
          reader.releaseLock()
        }
      } catch (err) {
        error = err
      } finally {
        if (idle !== undefined) clearTimeout(idle)
        controller.abort()
      }
      if (this.stopped) break
      const delayMs = this.delay()
      this.attempt++
      this.options.onStatus?.('reconnecting', { attempt: this.attempt, delayMs, error })
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs)
        this.wakeUp = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wakeUp = undefined
    }
  }
}
