/**
 * Work per key (a conversation), one run at a time on this instance: scheduling a key that is running asks for
 * one more run after the current one, so a notification is neither dropped nor run twice at once. The bot
 * runtime's turns and the integrations' outgoing deliveries are scheduled this way.
 */
export class SerialByKey {
  private readonly running = new Map<string, Promise<void>>()
  private readonly pending = new Set<string>()

  /** `stopped`: once true, nothing new starts and a run asked for again is not repeated. */
  constructor(private readonly stopped: () => boolean) {}

  /** Keys running or about to run again. */
  get size(): number {
    return this.running.size
  }

  /**
   * Runs `work` for `key` now, or once more after its current run. A failed run is not retried here: the work
   * is left to the next notification or the caller's sweep.
   */
  schedule(key: string, work: () => Promise<void>): void {
    if (this.stopped()) return
    if (this.running.has(key)) {
      this.pending.add(key)
      return
    }
    // The loop's last check of `pending` and the removal from `running` happen in the same synchronous step:
    // a schedule() arriving in between would otherwise be dropped until the sweep.
    const run = (async () => {
      try {
        do {
          this.pending.delete(key)
          await work()
        } while (this.pending.has(key) && !this.stopped())
      } catch {
        // left to the next notification or the sweep
      } finally {
        this.running.delete(key)
      }
    })()
    this.running.set(key, run)
  }

  /** One more run of `key` once its current run ends (the run found work that arrived meanwhile). */
  again(key: string): void {
    if (!this.stopped()) this.pending.add(key)
  }

  /** Resolves when `key` has no run going or asked for. */
  async idle(key: string): Promise<void> {
    while (this.running.has(key)) await this.running.get(key)
  }

  /** Resolves when no key has a run going or asked for. */
  async allIdle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()])
  }
}
