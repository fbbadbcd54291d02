import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { BotSummary } from './prelude-contract.js'
import type { FromWorker, ToWorker } from './quickjs-worker.js'
import { DEFAULT_LIMITS, SandboxError, type BotSandbox, type CheckResult, type SandboxHost, type SandboxLimits, type SandboxRun } from './sandbox.js'

/** Extra time a worker gets past a run's own limit before it is presumed stuck and replaced. */
const STUCK_GRACE_MS = 1_000

interface PendingRun {
  host: SandboxHost
  resolve(output: string): void
  reject(err: Error): void
  watchdog: NodeJS.Timeout
}

interface Slot {
  worker: Worker
  ready: Promise<void>
  runs: Map<number, PendingRun>
  checks: Map<number, { resolve(result: CheckResult): void; watchdog: NodeJS.Timeout }>
}

/**
 * Bot code in QuickJS (WebAssembly) on a pool of worker threads, so that it never runs in the
 * server's V8 context nor on its event loop. Each run goes to the least busy worker; a worker
 * that stops answering (its run overran every limit) is terminated and replaced.
 */
export class QuickJsSandbox implements BotSandbox {
  private readonly slots: Slot[] = []
  private readonly size: number
  private nextId = 1
  private closed = false
  /** Settles when close() is called, so that nothing waits on a worker that will never start. */
  private readonly closing: Promise<never>
  private signalClosing: (err: Error) => void = () => {}

  /** Workers start on first use (a server without bot code never pays for them). */
  constructor(private readonly options: { workers?: number; limits?: Partial<SandboxLimits> } = {}) {
    this.size = Math.max(1, options.workers ?? Math.min(4, availableParallelism()))
    this.closing = new Promise<never>((_resolve, reject) => {
      this.signalClosing = reject
    })
    this.closing.catch(() => {})
  }

  private get limits(): SandboxLimits {
    return { ...DEFAULT_LIMITS, ...this.options.limits }
  }

  private spawn(): Slot {
    // Under tsx/vitest the worker is TypeScript too: a tiny bootstrap registers tsx, then imports it.
    const worker = import.meta.url.endsWith('.ts')
      ? new Worker(
          `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./quickjs-worker.ts', import.meta.url).href)}) })`,
          { eval: true },
        )
      : new Worker(new URL('./quickjs-worker.js', import.meta.url))
    worker.unref()
    const slot: Slot = { worker, ready: undefined as never, runs: new Map(), checks: new Map() }
    slot.ready = new Promise((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        if (message.type === 'ready') {
          worker.off('error', reject)
          resolve()
        }
      }
      worker.on('message', onMessage)
      worker.once('error', reject)
    })
    slot.ready.catch(() => {})
    worker.on('message', (message: FromWorker) => this.onMessage(slot, message))
    worker.on('error', () => this.replace(slot, 'crashed', 'The sandbox worker crashed'))
    worker.on('exit', () => this.replace(slot, 'crashed', 'The sandbox worker exited'))
    return slot
  }

  /** Fails everything the slot was doing and drops it; the next request starts a fresh worker. */
  private replace(slot: Slot, kind: 'crashed' | 'timeout', message: string): void {
    const index = this.slots.indexOf(slot)
    if (index === -1) return
    for (const run of slot.runs.values()) {
      clearTimeout(run.watchdog)
      run.reject(new SandboxError(kind, message))
    }
    for (const check of slot.checks.values()) {
      clearTimeout(check.watchdog)
      check.resolve({ ok: false, error: message })
    }
    slot.runs.clear()
    slot.checks.clear()
    slot.worker.removeAllListeners('exit')
    void slot.worker.terminate()
    this.slots.splice(index, 1)
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        return
      case 'checked': {
        const check = slot.checks.get(message.id)
        if (!check) return
        slot.checks.delete(message.id)
        clearTimeout(check.watchdog)
        if (message.ok) check.resolve({ ok: true, summary: JSON.parse(message.summary!) as BotSummary })
        else check.resolve({ ok: false, error: message.error ?? 'unknown error' })
        return
      }
      case 'log':
        return slot.runs.get(message.id)?.host.log(message.level, message.text)
      case 'hostCall': {
        const run = slot.runs.get(message.id)
        const reply = (ok: boolean, value: string) =>
          slot.worker.postMessage({ type: 'hostResult', id: message.id, callId: message.callId, ok, value } satisfies ToWorker)
        if (!run) return reply(false, 'The run is over')
        let args: unknown
        try {
          args = JSON.parse(message.args)
        } catch {
          return reply(false, 'Host call arguments must be JSON')
        }
        run.host.call(message.method, args).then(
          (value) => reply(true, JSON.stringify(value ?? null)),
          (err: unknown) => reply(false, err instanceof Error ? `${(err as { type?: string }).type ?? err.name}: ${err.message}` : String(err)),
        )
        return
      }
      case 'done': {
        const run = slot.runs.get(message.id)
        if (!run) return
        slot.runs.delete(message.id)
        clearTimeout(run.watchdog)
        if (message.ok) run.resolve(message.output!)
        else run.reject(new SandboxError(message.kind ?? 'error', message.error ?? 'unknown error'))
      }
    }
  }

  private leastBusy(): Slot {
    const load = (slot: Slot) => slot.runs.size + slot.checks.size
    const best = this.slots.reduce<Slot | undefined>((b, slot) => (b === undefined || load(slot) < load(b) ? slot : b), undefined)
    if (best && (load(best) === 0 || this.slots.length >= this.size)) return best
    const slot = this.spawn()
    this.slots.push(slot)
    return slot
  }

  /** Waits for the worker to start; a worker that fails to start is dropped and the error reported. */
  private async ready(slot: Slot): Promise<void> {
    try {
      await Promise.race([slot.ready, this.closing])
    } catch (err) {
      if (this.closed) throw new SandboxError('crashed', 'The sandbox is closing')
      this.replace(slot, 'crashed', `The sandbox worker failed to start: ${(err as Error).message}`)
      throw new SandboxError('crashed', `The sandbox worker failed to start: ${(err as Error).message}`)
    }
  }

  async check(code: string): Promise<CheckResult> {
    if (this.closed) throw new SandboxError('crashed', 'The sandbox is closed')
    const slot = this.leastBusy()
    await this.ready(slot)
    const id = this.nextId++
    const limits = this.limits
    return new Promise((resolve) => {
      const watchdog = setTimeout(() => this.replace(slot, 'timeout', 'Loading the bot code took too long'), limits.budgetMs + STUCK_GRACE_MS)
      slot.checks.set(id, { resolve, watchdog })
      slot.worker.postMessage({ type: 'check', id, code, limits } satisfies ToWorker)
    })
  }

  async run(request: SandboxRun, host: SandboxHost): Promise<string> {
    if (this.closed) throw new SandboxError('crashed', 'The sandbox is closed')
    const slot = this.leastBusy()
    await this.ready(slot)
    const id = this.nextId++
    const { limits } = request
    return new Promise((resolve, reject) => {
      const watchdog = setTimeout(() => this.replace(slot, 'timeout', 'The bot code stopped responding and was terminated'), limits.timeoutMs + STUCK_GRACE_MS)
      slot.runs.set(id, { host, resolve, reject, watchdog })
      slot.worker.postMessage({
        type: 'run', id, botKey: `${request.botId}@${request.version}`, code: request.code, entry: request.entry, input: request.input, limits,
      } satisfies ToWorker)
    })
  }

  async close(): Promise<void> {
    this.closed = true
    this.signalClosing(new SandboxError('crashed', 'The sandbox is closing'))
    await Promise.all(
      [...this.slots].map(async (slot) => {
        slot.worker.removeAllListeners('exit')
        slot.worker.removeAllListeners('error')
        for (const run of slot.runs.values()) {
          clearTimeout(run.watchdog)
          run.reject(new SandboxError('crashed', 'The sandbox is closing'))
        }
        for (const check of slot.checks.values()) clearTimeout(check.watchdog)
        await slot.worker.terminate()
      }),
    )
    this.slots.length = 0
  }
}
