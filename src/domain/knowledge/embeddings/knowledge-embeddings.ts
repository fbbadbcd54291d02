import type { PassageHit } from '../../../store/knowledge-store.js'
import type { PassageVectorStore } from '../../../store/passage-vector-store.js'
import { EmbeddingBackfill, passageText } from './backfill.js'
import { FUSION, type Ranking, type SemanticQuery, type SemanticRanking } from './fusion.js'
import { ServiceHealth, type Log } from './health.js'
import { OpenAiEmbeddings, type EmbeddingsProvider } from './provider.js'
import { SentenceModelEmbeddings } from './sentence-model.js'
import type { MetricsRegistry } from '../../../lib/metrics.js'
import { WORD_VECTORS_FILE, WordVectorEmbeddings, wordVectorsPresent } from './word-vectors.js'

/** PARLEY_EMBEDDINGS_* (src/config.ts). */
export interface EmbeddingsSettings {
  url: string
  model: string
  apiKey: string | undefined
  /** Passages per request to the service. */
  batchSize: number
  /** Per request of the backfill. */
  timeoutMs: number
  /** Per query embedding during a search: past it the search answers lexically. */
  queryTimeoutMs: number
  /** First wait after a failure, doubled up to maxBackoffMs. */
  backoffMs: number
  maxBackoffMs: number
  /** How often the backfill looks for passages without vectors when nothing woke it. */
  pollMs: number
  /**
   * Vector hits below this cosine similarity are dropped (model-dependent: unrelated texts score ~0.1–0.4 with most
   * models). Above 0, a question the documents do not cover can find nothing instead of the least unrelated passage.
   */
  minSimilarity: number
}

/** The built-in provider computes in-process: large batches, no service to wait for. */
const BUILTIN_SETTINGS = { batchSize: 256, timeoutMs: 60_000, queryTimeoutMs: 60_000, backoffMs: 1_000, maxBackoffMs: 60_000, pollMs: 30_000, minSimilarity: 0 }

/**
 * The built-in sentence model (sentence-model.ts) embeds in-process too, in small chunks (a query waits behind one):
 * a batch is a few seconds of work. A query waits for a cold worker to load the model (~1 s, longer on a busy
 * machine), at most 3 s: past that the search answers without the rerank rather than keep its caller waiting.
 */
const SENTENCE_SETTINGS = { batchSize: 16, timeoutMs: 300_000, queryTimeoutMs: 3_000, backoffMs: 1_000, maxBackoffMs: 60_000, pollMs: 30_000, minSimilarity: 0 }

/** Passage vectors kept for reranks (100 floats each: ~10 MB at most). */
const PASSAGE_CACHE = 20_000

const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0
}

/**
 * The built-in sentence model is one worker shared by every bot: a bot has at most this many questions waiting for it
 * (more are searched without the rerank), and a question is embedded by its first MAX_SENTENCE_QUERY_CHARS characters
 * (its cost grows with the length), so one bot's flood of long searches cannot hold up the others' (threats: tenants).
 */
export const MAX_QUERIES_PER_BOT = 2
const MAX_SENTENCE_QUERY_CHARS = 500

/** Query embeddings kept (a repeated question costs no request). */
const QUERY_CACHE = 256
/** Characters of a query sent to the service. */
const MAX_QUERY_EMBED_CHARS = 2000

/**
 * The embeddings half of hybrid retrieval for the knowledge service: the vector ranking searches fuse with the
 * lexical one, and the backfill that embeds passages. Never fails a search or an indexing: when the service is
 * down, slow or answers garbage, rank() returns [] (search stays lexical) and the backfill waits and retries.
 */
export class KnowledgeEmbeddings implements SemanticRanking {
  readonly backfill: EmbeddingBackfill
  private readonly health: ServiceHealth
  private readonly cache = new Map<string, Float32Array>()

  constructor(
    private readonly vectors: PassageVectorStore,
    private readonly provider: EmbeddingsProvider,
    private readonly settings: Pick<EmbeddingsSettings, 'batchSize' | 'timeoutMs' | 'queryTimeoutMs' | 'backoffMs' | 'maxBackoffMs' | 'pollMs' | 'minSimilarity'>,
    private readonly log: { warn: Log; info: Log; clock?: () => number },
  ) {
    const clock = log.clock ?? Date.now
    this.health = new ServiceHealth({ backoffMs: settings.backoffMs, maxBackoffMs: settings.maxBackoffMs, clock, warn: log.warn, info: log.info })
    this.backfill = new EmbeddingBackfill({
      vectors, provider, health: this.health, batchSize: settings.batchSize, timeoutMs: settings.timeoutMs, pollMs: settings.pollMs,
      clock, warn: log.warn, info: log.info,
    })
  }

  static fromSettings(vectors: PassageVectorStore, settings: EmbeddingsSettings, log: { warn: Log; info: Log }): KnowledgeEmbeddings {
    return new KnowledgeEmbeddings(vectors, new OpenAiEmbeddings({ url: settings.url, model: settings.model, apiKey: settings.apiKey }), settings, log)
  }

  /**
   * The built-in provider (word-vectors.ts: in-process, no service), used when no endpoint is configured; undefined
   * (search stays lexical, said once) when the word-vector file was not built.
   */
  static builtin(vectors: PassageVectorStore, log: { warn: Log; info: Log }): KnowledgeEmbeddings | undefined {
    if (!wordVectorsPresent()) {
      log.warn({ file: WORD_VECTORS_FILE }, 'knowledge: the built-in word vectors were not built (npm run build makes them); search is lexical only')
      return undefined
    }
    return new KnowledgeEmbeddings(vectors, new WordVectorEmbeddings(), BUILTIN_SETTINGS, log)
  }

  /**
   * The built-in sentence model (sentence-model.ts: Universal Sentence Encoder lite, in a worker thread), used when no
   * endpoint is configured and PARLEY_KB_SENTENCE_MODEL is on: passages are embedded in the background and stored, and
   * a search reranks its lexical candidates with their stored vectors once every candidate has one (fusion.ts: until
   * then it answers lexically).
   */
  static sentenceModel(vectors: PassageVectorStore, log: { warn: Log; info: Log }, provider = new SentenceModelEmbeddings()): KnowledgeEmbeddings {
    return new KnowledgeEmbeddings(vectors, provider, SENTENCE_SETTINGS, log)
  }

  /** Which semantic signal this is: an endpoint's model, the built-in sentence model or the built-in word vectors. */
  get kind(): 'endpoint' | 'sentence' | 'words' {
    return this.provider instanceof WordVectorEmbeddings ? 'words' : this.provider instanceof SentenceModelEmbeddings ? 'sentence' : 'endpoint'
  }

  get mode(): 'rrf' | 'rerank' {
    return this.kind === 'words' ? FUSION.builtinMode : this.kind === 'sentence' ? 'rerank' : 'rrf'
  }

  get rerankWeight(): number {
    return this.kind === 'sentence' ? FUSION.sentenceRerankWeight : FUSION.rerankWeight
  }

  /** Rerank mode: the query's embedding starts now, beside the lexical search (the sentence model's worker computes it). */
  get prepare(): ((query: string, botId: string) => void) | undefined {
    return this.kind === 'sentence' ? (query, botId) => void this.embedQueryOf(botId, query) : undefined
  }

  /** Questions of each bot waiting for the sentence model (MAX_QUERIES_PER_BOT). */
  private readonly waiting = new Map<string, number>()

  /** The sentence model's embedding of a bot's question, unless the bot already has MAX_QUERIES_PER_BOT waiting. */
  private async embedQueryOf(botId: string, query: string): Promise<Float32Array | undefined> {
    const text = query.slice(0, MAX_SENTENCE_QUERY_CHARS)
    if (this.cache.has(text) || this.inFlight.has(text)) return this.embedQuery(text)
    const waiting = this.waiting.get(botId) ?? 0
    if (waiting >= MAX_QUERIES_PER_BOT) return undefined
    this.waiting.set(botId, waiting + 1)
    try {
      return await this.embedQuery(text)
    } finally {
      const left = (this.waiting.get(botId) ?? 1) - 1
      if (left > 0) this.waiting.set(botId, left)
      else this.waiting.delete(botId)
    }
  }

  get weight(): number {
    return this.provider instanceof WordVectorEmbeddings ? FUSION.builtinWeight : 1
  }

  get model(): string {
    return this.provider.model
  }

  start(): void {
    if (this.kind === 'sentence') {
      this.log.info({ model: this.provider.model }, 'knowledge: built-in sentence model on (passages embedded in the background; lexical candidates reranked)')
      this.backfill.start()
      return
    }
    // The built-in word vectors rerank the lexical candidates with vectors computed here from their text (similarity
    // below): stored vectors would never be read, so passages are not embedded in the background (that pass took
    // most of the indexing time and, running beside searches, set their p99: bench/kb-latency.ts).
    if (this.provider instanceof WordVectorEmbeddings) {
      this.log.info({ model: this.provider.model }, 'knowledge: built-in word vectors on (lexical candidates reranked in-process)')
      return
    }
    this.log.info({ model: this.provider.model, scoring: this.vectors.engine.name, note: this.vectors.engine.note }, 'embeddings: hybrid retrieval on')
    this.backfill.start()
  }

  /** Searches by how they were ranked (fusion.ts Ranking). */
  private readonly rankings = new Map<Ranking, number>()

  ranked(ranking: Ranking): void {
    this.rankings.set(ranking, (this.rankings.get(ranking) ?? 0) + 1)
  }

  registerMetrics(metrics: MetricsRegistry): void {
    if (this.provider instanceof SentenceModelEmbeddings) this.provider.registerMetrics(metrics)
    metrics.collect('parley_kb_search_ranking_total', 'Knowledge searches by how they were ranked: reranked or fused with the vectors, or lexically (lexical_not_embedded: a candidate had no vector yet; lexical_no_query_vector: the question could not be embedded in time; lexical_no_vectors: the vector ranking found nothing)',
      () => [...this.rankings].map(([ranking, value]) => ({ labels: { ranking }, value })), 'counter')
  }

  async stop(): Promise<void> {
    await this.backfill.stop()
    if (this.provider instanceof SentenceModelEmbeddings) await this.provider.close()
  }

  /** A file's passages were replaced (indexed, set by the caller, copied): its vectors go, the backfill embeds the new ones. */
  async passagesReplaced(fileId: string): Promise<void> {
    try {
      await this.vectors.forgetFile(fileId)
    } catch (err) {
      this.log.warn({ fileId, err }, 'embeddings: dropping the vectors of replaced passages failed (they stay ignored)')
    }
    this.backfill.poke()
  }

  /** Passage vectors computed for reranks (built-in provider only), by passage id and text. */
  private readonly passageCache = new Map<string, Float32Array | null>()

  /**
   * Rerank mode (the built-in word vectors): the cosine of each lexical candidate with the query, embedded here from
   * its text (the same text and vector the backfill stores) — a nearest scan over every stored vector cost ~1 s per
   * search over 20,000 passages (bench/kb-latency.ts), embedding 50 candidates in-process well under a millisecond.
   */
  get similarity(): ((query: string, hits: PassageHit[]) => Promise<Map<string, number> | undefined>) | undefined {
    if (this.kind === 'sentence') return (query, hits) => this.storedSimilarity(query, hits)
    return this.provider instanceof WordVectorEmbeddings ? (query, hits) => this.builtinSimilarity(query, hits) : undefined
  }

  /**
   * Rerank mode with the built-in sentence model: the cosine of each lexical candidate with the query, from the
   * candidate's stored vector (the backfill's); one the model refused counts 0. While some candidate has no vector yet
   * the answer is empty without waiting for the query's embedding (the search is lexical then: fusion.ts; the
   * embedding prepare() started goes on and is kept for the next search).
   */
  private async storedSimilarity(query: string, hits: PassageHit[]): Promise<Map<string, number> | undefined> {
    try {
      const stored = await this.vectors.vectorsOf(this.provider.model, hits.map((h) => ({ fileId: h.fileId, blobName: h.file.blobName ?? '', position: h.position })))
      const out = new Map<string, number>()
      if (hits.length === 0 || hits.some((h) => !stored.has(h.id))) return out
      const q = await this.embedQueryOf(hits[0]!.file.botId, query)
      if (!q) return undefined
      for (const h of hits) {
        const v = stored.get(h.id)
        if (v === null) out.set(h.id, 0)
        // Another length: stored before the model changed its answers; the backfill embeds it again.
        else if (v && v.length === q.length) out.set(h.id, cosine(q, v))
      }
      return out
    } catch (err) {
      this.log.warn({ err }, 'embeddings: the sentence model\'s similarity failed; the search answers lexically')
      return undefined
    }
  }

  get headingSimilarity(): ((query: string, hits: PassageHit[]) => Promise<Map<string, number> | undefined>) | undefined {
    return this.provider instanceof WordVectorEmbeddings ? (query, hits) => this.builtinHeadingSimilarity(query, hits) : undefined
  }

  /** Heading vectors (the last part of a passage's title: in an FAQ, the question it answers), by heading text. */
  private readonly headingCache = new Map<string, Float32Array | null>()

  private async builtinHeadingSimilarity(query: string, hits: PassageHit[]): Promise<Map<string, number> | undefined> {
    try {
      const q = await this.embedQuery(query)
      if (!q) return undefined
      const out = new Map<string, number>()
      for (const h of hits) {
        const path = h.title.split(' › ')
        if (path.length < 2) continue
        const heading = path[path.length - 1]!
        let v = this.headingCache.get(heading)
        if (v === undefined) {
          ;[v = null] = await this.provider.embed([heading], { timeoutMs: this.settings.queryTimeoutMs })
          if (this.headingCache.size >= PASSAGE_CACHE) this.headingCache.delete(this.headingCache.keys().next().value!)
          this.headingCache.set(heading, v)
        }
        if (v) out.set(h.id, cosine(q, v))
      }
      return out
    } catch (err) {
      this.log.warn({ err }, 'embeddings: built-in heading similarity failed; the search answers without it')
      return undefined
    }
  }

  private async builtinSimilarity(query: string, hits: PassageHit[]): Promise<Map<string, number> | undefined> {
    try {
      const q = await this.embedQuery(query)
      if (!q) return undefined
      const missing = hits.filter((h) => !this.passageCache.has(`${h.id}:${h.content.length}`))
      const vectors = missing.length ? await this.provider.embed(missing.map(passageText), { timeoutMs: this.settings.queryTimeoutMs }) : []
      missing.forEach((h, i) => {
        if (this.passageCache.size >= PASSAGE_CACHE) this.passageCache.delete(this.passageCache.keys().next().value!)
        this.passageCache.set(`${h.id}:${h.content.length}`, vectors[i] ?? null)
      })
      const out = new Map<string, number>()
      for (const h of hits) {
        const v = this.passageCache.get(`${h.id}:${h.content.length}`)
        out.set(h.id, v ? cosine(q, v) : 0)
      }
      return out
    } catch (err) {
      this.log.warn({ err }, 'embeddings: built-in similarity failed; the search answers lexically')
      return undefined
    }
  }

  /** RRF mode (an endpoint's model): whether the backfill is done with every one of these lexical candidates. */
  get embedded(): ((hits: PassageHit[]) => Promise<boolean>) | undefined {
    return this.mode === 'rrf' ? (hits) => this.allEmbedded(hits) : undefined
  }

  private async allEmbedded(hits: PassageHit[]): Promise<boolean> {
    try {
      const done = await this.vectors.embeddedOf(this.provider.model, hits.map((h) => ({ fileId: h.fileId, blobName: h.file.blobName ?? '', position: h.position })))
      return hits.every((h) => done.has(h.id))
    } catch (err) {
      this.log.warn({ err }, 'embeddings: checking the candidates\' vectors failed; the search answers lexically')
      return false
    }
  }

  async rank(q: SemanticQuery): Promise<PassageHit[]> {
    try {
      if (!(await this.vectors.hasVectors(q.botId, this.provider.model))) return []
      const vector = await this.embedQuery(q.query)
      if (!vector) return []
      // A passage pointing away from the query (cosine ≤ 0), or less similar than the setting, is no evidence of relevance.
      const hits = await this.vectors.nearest({ botId: q.botId, model: this.provider.model, vector, files: q.files, now: q.now, limit: q.limit })
      return hits.filter((h) => h.score > 0 && h.score >= this.settings.minSimilarity)
    } catch (err) {
      this.log.warn({ err }, 'embeddings: vector ranking failed; the search answers lexically')
      return []
    }
  }

  /** Query embeddings being computed, by text: a search's prepare() and its similarity() share one. */
  private readonly inFlight = new Map<string, Promise<Float32Array | undefined>>()

  private embedQuery(query: string): Promise<Float32Array | undefined> {
    const text = query.slice(0, MAX_QUERY_EMBED_CHARS)
    const cached = this.cache.get(text)
    if (cached) {
      this.cache.delete(text)
      this.cache.set(text, cached)
      return Promise.resolve(cached)
    }
    const pending = this.inFlight.get(text)
    if (pending) return pending
    if (!this.health.available()) return Promise.resolve(undefined)
    const computing = (async () => {
      try {
        const [vector] = await this.provider.embed([text], { timeoutMs: this.settings.queryTimeoutMs, priority: true })
        this.health.succeeded()
        if (!vector) return undefined
        this.cache.set(text, vector)
        if (this.cache.size > QUERY_CACHE) this.cache.delete(this.cache.keys().next().value!)
        return vector
      } catch (err) {
        this.health.failed(err, 'embedding a search query')
        return undefined
      } finally {
        this.inFlight.delete(text)
      }
    })()
    this.inFlight.set(text, computing)
    return computing
  }
}
