import type { PassageHit } from '../../../store/knowledge-store.js'
import type { PassageVectorStore } from '../../../store/passage-vector-store.js'
import { EmbeddingBackfill } from './backfill.js'
import { FUSION, type SemanticQuery, type SemanticRanking } from './fusion.js'
import { ServiceHealth, type Log } from './health.js'
import { OpenAiEmbeddings, type EmbeddingsProvider } from './provider.js'
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

  get mode(): 'rrf' | 'rerank' {
    return this.provider instanceof WordVectorEmbeddings ? FUSION.builtinMode : 'rrf'
  }

  get weight(): number {
    return this.provider instanceof WordVectorEmbeddings ? FUSION.builtinWeight : 1
  }

  get model(): string {
    return this.provider.model
  }

  start(): void {
    this.log.info({ model: this.provider.model, scoring: this.vectors.engine.name, note: this.vectors.engine.note }, 'embeddings: hybrid retrieval on')
    this.backfill.start()
  }

  stop(): Promise<void> {
    return this.backfill.stop()
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

  private async embedQuery(query: string): Promise<Float32Array | undefined> {
    const text = query.slice(0, MAX_QUERY_EMBED_CHARS)
    const cached = this.cache.get(text)
    if (cached) {
      this.cache.delete(text)
      this.cache.set(text, cached)
      return cached
    }
    if (!this.health.available()) return undefined
    try {
      const [vector] = await this.provider.embed([text], { timeoutMs: this.settings.queryTimeoutMs })
      this.health.succeeded()
      if (!vector) return undefined
      this.cache.set(text, vector)
      if (this.cache.size > QUERY_CACHE) this.cache.delete(this.cache.keys().next().value!)
      return vector
    } catch (err) {
      this.health.failed(err, 'embedding a search query')
      return undefined
    }
  }
}
