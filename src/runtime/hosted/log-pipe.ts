/**
 * A hosted process's stdout and stderr as log lines (its bot's logs, or its integration's): split at newlines,
 * each line cut at MAX_LINE characters, written in batches, and at most `linesPerWindow` lines per window: a
 * process printing without end costs the store a bounded number of rows, and one line says how many were dropped.
 */
import type { Readable } from 'node:stream'

const MAX_LINE = 4000
/** A partial line longer than this is written as a line of its own (a process printing without a newline). */
const MAX_PENDING = 64 * 1024
const FLUSH_MS = 250

export interface LogLine { level: 'info' | 'error'; message: string; at: number }

export interface LogPipeOptions {
  linesPerWindow: number
  windowMs: number
  clock: () => number
  write: (lines: LogLine[]) => Promise<void>
}

export class LogPipe {
  private batch: LogLine[] = []
  private timer: NodeJS.Timeout | undefined
  private windowStart = 0
  private inWindow = 0
  private dropped = 0
  private writing: Promise<void> = Promise.resolve()

  constructor(private readonly options: LogPipeOptions) {}

  /** Reads `stream` line by line at `level` until it ends. */
  attach(stream: Readable, level: LogLine['level']): void {
    let pending = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      pending += chunk
      let newline: number
      while ((newline = pending.indexOf('\n')) >= 0) {
        this.line(level, pending.slice(0, newline))
        pending = pending.slice(newline + 1)
      }
      if (pending.length > MAX_PENDING) {
        this.line(level, pending)
        pending = ''
      }
    })
    stream.on('end', () => {
      if (pending) this.line(level, pending)
    })
  }

  /** A line of Parley's own about the process (started, stopped, crashed): never dropped. */
  note(level: LogLine['level'], message: string): void {
    this.push({ level, message, at: this.options.clock() })
  }

  /** The process is gone: what it dropped in its last window is counted, and everything batched written. */
  async close(): Promise<void> {
    this.reportDropped(this.options.clock())
    await this.flush()
  }

  /** Writes what is batched; resolves once it is written. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    const lines = this.batch
    this.batch = []
    if (lines.length > 0) this.writing = this.writing.then(() => this.options.write(lines)).catch(() => {})
    await this.writing
  }

  private line(level: LogLine['level'], text: string): void {
    const message = text.replace(/\r$/, '').slice(0, MAX_LINE)
    if (!message.trim()) return
    const now = this.options.clock()
    if (now - this.windowStart >= this.options.windowMs) {
      this.reportDropped(now)
      this.windowStart = now
      this.inWindow = 0
    }
    if (++this.inWindow > this.options.linesPerWindow) {
      this.dropped++
      return
    }
    this.push({ level, message, at: now })
  }

  private reportDropped(now: number): void {
    if (this.dropped === 0) return
    this.push({ level: 'error', message: `${this.dropped} log lines of the hosted process were dropped (more than ${this.options.linesPerWindow} in ${this.options.windowMs / 1000} s)`, at: now })
    this.dropped = 0
  }

  private push(line: LogLine): void {
    this.batch.push(line)
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS)
  }
}
