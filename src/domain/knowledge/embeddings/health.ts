import { EmbeddingsError } from './provider.js'

export type Log = (context: Record<string, unknown>, message: string) => void

/**
 * What this instance knows of the embeddings service: after a failure it is left alone for a backoff that doubles
 * up to a ceiling (searches answer lexically meanwhile, the backfill waits), and the first success ends it.
 * Failures are logged when the service goes down and then at each doubling, not once per request.
 */
export class ServiceHealth {
  private failures = 0
  private downUntil = 0

  constructor(private readonly options: { backoffMs: number; maxBackoffMs: number; clock: () => number; warn: Log; info: Log }) {}

  /** Whether a call may be made now. */
  available(): boolean {
    return this.options.clock() >= this.downUntil
  }

  /** How long until the next call may be made (0: now). */
  waitMs(): number {
    return Math.max(0, this.downUntil - this.options.clock())
  }

  failed(err: unknown, during: string): void {
    // A refusal of some input says nothing of the service's health.
    if (err instanceof EmbeddingsError && err.kind === 'rejected') return
    this.failures++
    const delay = Math.min(this.options.maxBackoffMs, this.options.backoffMs * 2 ** Math.min(this.failures - 1, 30))
    this.downUntil = this.options.clock() + delay
    if ((this.failures & (this.failures - 1)) === 0) {
      this.options.warn({ during, failures: this.failures, retryInMs: delay, err: (err as Error)?.message ?? String(err) },
        'embeddings service failed: searches answer lexically and embedding waits until it answers again')
    }
  }

  succeeded(): void {
    if (this.failures > 0) this.options.info({ failures: this.failures }, 'embeddings service answers again')
    this.failures = 0
    this.downUntil = 0
  }
}
