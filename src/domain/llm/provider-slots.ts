import { ProviderError } from './llm-provider.js'

/**
 * The calls in flight to one provider (per instance): at most `concurrency` at once, at most `queue` more waiting in
 * order; past that a call is refused at once (`busy`: 503, or the next model of a fallback list). A waiting call whose
 * signal aborts (its timeout, its caller gone) leaves the queue. One provider's slots never hold another's calls.
 */
export class ProviderSlots {
  private active = 0
  private readonly waiting: { grant: () => void }[] = []

  constructor(
    private readonly provider: string,
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  get inFlight(): number {
    return this.active
  }

  get queued(): number {
    return this.waiting.length
  }

  /** Resolves with the release function once a slot is this call's. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (this.active < this.concurrency) return Promise.resolve(this.take())
    if (this.waiting.length >= this.queue) {
      return Promise.reject(new ProviderError('busy', `has ${this.active} calls in flight and ${this.waiting.length} waiting (its limit); retry in a moment`, 1))
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener('abort', onAbort)
          resolve(this.take())
        },
      }
      const onAbort = () => {
        const i = this.waiting.indexOf(entry)
        if (i >= 0) this.waiting.splice(i, 1)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(entry)
    })
  }

  private take(): () => void {
    this.active++
    let released = false
    return () => {
      if (released) return
      released = true
      this.active--
      const next = this.waiting.shift()
      if (next) next.grant()
    }
  }

  toString(): string {
    return this.provider
  }
}
