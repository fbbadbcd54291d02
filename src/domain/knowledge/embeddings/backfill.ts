import { uuidv7 } from '../../../lib/ids.js'
import type { PassageVectorStore, PendingPassage } from '../../../store/passage-vector-store.js'
import type { Log, ServiceHealth } from './health.js'
import { EmbeddingsError, type EmbeddingsProvider } from './provider.js'

/** A claim older than this is taken over (the instance holding it is presumed dead); renewed at every batch. */
const CLAIM_STALE_MS = 5 * 60_000
/** Files looked at per pass, taken in turn from each bot among the first PENDING_LOOKED_AT pending files. */
const FILES_PER_PASS = 20
const PENDING_LOOKED_AT = 200
/**
 * Batches of one file per pass: a large file is embedded over many passes, between which the other files (of other
 * bots) get theirs, so one bot's big knowledge base does not hold back another's new file (the built-in sentence
 * model embeds ~15 passages/s: 20,000 passages are 20 minutes).
 */
const BATCHES_PER_FILE = 4
/** Garbage (other models' vectors, vectors of replaced passages) is collected at most this often, when idle. */
const COLLECT_EVERY_MS = 10 * 60_000
const COLLECT_BATCH = 1000
/** Characters of a passage sent to the service (title and content); models cut longer inputs anyway. */
export const MAX_EMBED_CHARS = 8000

export const passageText = (p: { title: string; content: string }) => `${p.title}\n\n${p.content}`.slice(0, MAX_EMBED_CHARS)

export interface BackfillOptions {
  vectors: PassageVectorStore
  provider: EmbeddingsProvider
  health: ServiceHealth
  batchSize: number
  timeoutMs: number
  /** How often to look for passages without vectors when nothing woke the loop (other instances' files, missed pokes). */
  pollMs: number
  clock: () => number
  warn: Log
  info: Log
}

/**
 * The background loop that gives every passage of every finished file a vector of the configured model. The
 * database is the queue: "passages without a vector for this model" is recomputed at each pass, so the work
 * survives restarts, a model change makes every passage pending again, and a file re-indexed meanwhile is simply
 * seen with its new passages. Files are claimed (stale claims taken over) so instances sharing PostgreSQL split
 * the work; each batch is stored with a compare-and-set on the passage text, so a vector never lands on a
 * passage that changed while it was computed.
 */
export class EmbeddingBackfill {
  private readonly owner = `embed-${uuidv7()}`
  private stopped = true
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined
  private poked = false
  private lastCollect = -Infinity
  private dims: number | undefined
  private idleWaiters: (() => void)[] = []

  constructor(private readonly o: BackfillOptions) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.loop = this.run()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.wake?.()
    await this.loop
    this.loop = undefined
    for (const w of this.idleWaiters.splice(0)) w()
  }

  /** New passages may be waiting (a file finished indexing). */
  poke(): void {
    this.poked = true
    this.wake?.()
  }

  /** Resolves once a pass finds nothing left to embed (or the loop stops): tests, benchmarks. */
  idle(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve)
      this.poke()
    })
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const wait = this.o.health.waitMs()
      if (wait > 0) {
        await this.sleep(wait, false)
        continue
      }
      this.poked = false
      let worked = false
      try {
        worked = await this.pass()
      } catch (err) {
        if (err instanceof EmbeddingsError) this.o.health.failed(err, 'embedding passages')
        else {
          this.o.warn({ err }, 'embeddings backfill failed; retrying')
          await this.sleep(Math.min(this.o.pollMs, 5_000), false)
        }
        continue
      }
      if (worked || this.poked) continue
      await this.collect()
      for (const w of this.idleWaiters.splice(0)) w()
      await this.sleep(this.o.pollMs, true)
    }
  }

  private sleep(ms: number, wakeOnPoke: boolean): Promise<void> {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.wake = undefined
        resolve()
      }
      const timer = setTimeout(done, ms)
      timer.unref?.()
      this.wake = () => {
        if (wakeOnPoke || this.stopped) done()
      }
    })
  }

  /** One look at pending files; true when some vector was stored. */
  private async pass(): Promise<boolean> {
    const { vectors, provider, clock } = this.o
    let worked = false
    for (const file of takeInTurn(await vectors.filesPending(provider.model, clock(), PENDING_LOOKED_AT), FILES_PER_PASS)) {
      if (this.stopped) break
      if (!(await vectors.claim(file.fileId, this.owner, clock(), clock() - CLAIM_STALE_MS))) continue
      try {
        for (let batches = 0; batches < BATCHES_PER_FILE; batches++) {
          const batch = await vectors.pendingPassages(file, provider.model, this.o.batchSize)
          if (batch.length === 0 || this.stopped) break
          // Nothing stored (every passage changed meanwhile): leave the file to the next pass.
          if ((await this.embed(batch)) === 0) break
          worked = true
          await vectors.claim(file.fileId, this.owner, clock(), clock() - CLAIM_STALE_MS)
        }
      } finally {
        await vectors.release(file.fileId, this.owner).catch(() => {})
      }
    }
    return worked
  }

  /** Embeds and stores a batch; inputs the service refuses are isolated by halving and marked, never retried. */
  private async embed(batch: PendingPassage[]): Promise<number> {
    const { vectors, provider } = this.o
    let embedded: (Float32Array | null)[]
    try {
      embedded = await provider.embed(batch.map((p) => provider.textOf?.(p) ?? passageText(p)), { timeoutMs: this.o.timeoutMs })
    } catch (err) {
      if (!(err instanceof EmbeddingsError) || err.kind !== 'rejected') throw err
      if (batch.length === 1) {
        this.o.warn({ fileId: batch[0]!.fileId, position: batch[0]!.position, err: err.message }, 'embeddings service refused a passage; it is searched lexically only')
        return vectors.putVectors(provider.model, [{ passage: batch[0]!, vector: null }])
      }
      const half = Math.ceil(batch.length / 2)
      return (await this.embed(batch.slice(0, half))) + (await this.embed(batch.slice(half)))
    }
    this.o.health.succeeded()
    const first = embedded.find((v) => v !== null)
    if (first) await this.checkDims(first.length)
    return vectors.putVectors(provider.model, batch.map((passage, i) => ({ passage, vector: embedded[i] ?? null })))
  }

  /** The service answers another length than the stored vectors of this model: those can no longer be compared. */
  private async checkDims(dims: number): Promise<void> {
    if (this.dims === dims) return
    const stored = await this.o.vectors.dimsOf(this.o.provider.model)
    if (stored.some((d) => d !== dims)) {
      const dropped = await this.o.vectors.dropOtherDims(this.o.provider.model, dims)
      this.o.warn({ model: this.o.provider.model, dims, stored, dropped }, 'embeddings service changed its vector length for this model: older vectors dropped, passages embedded again')
    }
    this.dims = dims
  }

  private async collect(): Promise<void> {
    if (this.o.clock() - this.lastCollect < COLLECT_EVERY_MS) return
    this.lastCollect = this.o.clock()
    try {
      let total = 0
      for (let n = COLLECT_BATCH; n === COLLECT_BATCH && !this.stopped; total += n) n = await this.o.vectors.collectGarbage(this.o.provider.model, COLLECT_BATCH)
      if (total > 0) this.o.info({ dropped: total }, 'embeddings: vectors of other models and of replaced passages dropped')
    } catch (err) {
      this.o.warn({ err }, 'embeddings: dropping stale vectors failed')
    }
  }
}

/** Up to `limit` files, one of each bot in turn (a bot's files in the order given). */
export function takeInTurn<F extends { botId: string }>(files: F[], limit: number): F[] {
  const byBot = new Map<string, F[]>()
  for (const f of files) byBot.set(f.botId, [...(byBot.get(f.botId) ?? []), f])
  const queues = [...byBot.values()]
  const out: F[] = []
  for (let i = 0; out.length < limit && queues.some((q) => i < q.length); i++) {
    for (const q of queues) if (i < q.length && out.length < limit) out.push(q[i]!)
  }
  return out
}
