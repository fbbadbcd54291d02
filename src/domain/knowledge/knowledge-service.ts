import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type { BlobStore } from '../../blobs/blob-store.js'
import { ApiError, errors } from '../../lib/errors.js'
import { uuidv7 } from '../../lib/ids.js'
import { CONTENT_STATUSES, type FileRow, type FileStore } from '../../store/file-store.js'
import type { KnowledgeBaseRow, KnowledgeStore, NewPassage, PassageHit, PassageRow, PassageSubtype } from '../../store/knowledge-store.js'
import type { Page } from '../../store/store.js'
import { expandTerms, isStopWord, MAX_QUERY_CHARS, queryTerms, vocabulary, words } from './query.js'
import { RANKING, rerank, semanticExpansions, stem, type TermStats } from './rank.js'
import { relevanceOf } from './relevance.js'
import { hybridRanking, type SemanticRanking } from './embeddings/fusion.js'
import type { KnowledgeEmbeddings } from './embeddings/knowledge-embeddings.js'

export const KB_NAME_MAX = 255
export const KB_PAGE_SIZE = { default: 20, max: 100 }
export const SEARCH_LIMIT = { default: 10, max: 50 }
export const MAX_CONTEXT_DEPTH = 10
/** The file tag that puts a file in a knowledge base by id (the Botpress convention). */
export const KB_ID_TAG = 'kbId'
const PASSAGE_BATCH = 100
const RESUME_BATCH = 100
/** A claim older than this is taken over (the instance holding it is presumed dead). */
const CLAIM_STALE_MS = 10 * 60_000
/** setFilePassages: at most this many passages (the 1 MB body limit of the Files API applies too)… */
export const MAX_SET_PASSAGES = 2000
/** …each of 1 to this many characters (the extractor's own passages are about 700). */
export const MAX_PASSAGE_CHARS = 10_000
export const MAX_PAGE_NUMBER = 1_000_000
/** Passage types a caller may give (the extractor also writes `page`). */
export const PASSAGE_TYPES = ['title', 'subtitle', 'paragraph', 'blockquote', 'list', 'table', 'code', 'image'] as const satisfies readonly PassageSubtype[]
/** A title or subtitle passage is the heading of the passages after it, cut to this length. */
const MAX_HEADING_CHARS = 200
/** Passages read per query when a copy takes over its source's passages. */
const COPY_PAGE = 1000

/** A passage as setFilePassages receives it, in document order. */
export interface PassageInput {
  content: string
  type?: (typeof PASSAGE_TYPES)[number] | undefined
  pageNumber?: number | undefined
}

export interface SearchInput {
  query: string
  /** Files must carry every one of these tags. */
  tags?: Record<string, string> | undefined
  /** Only files of these knowledge bases (unknown ids are a 404). */
  knowledgeBaseIds?: string[] | undefined
  limit?: number | undefined
  contextDepth?: number | undefined
  withContext?: boolean | undefined
}

export interface SearchResult extends PassageHit {
  /** Absolute relevance in [0, 1] (relevance.ts): what the "I don't know" threshold compares. */
  relevance: number
  context?: { id: string; text: string; offset: number; type: 'preceding' | 'subsequent' | 'current' }[]
}

export interface KnowledgeServiceDeps {
  store: KnowledgeStore
  files: FileStore
  blobs: BlobStore
  clock: () => number
  warn?: ((context: Record<string, unknown>, message: string) => void) | undefined
  /** Hybrid retrieval with an embeddings service (embeddings/): absent, search is lexical only. */
  embeddings?: KnowledgeEmbeddings | undefined
}

/**
 * Search, independent of the indexer (bot code searches through the runtime with only a store): the query
 * is cut into terms, unknown words get their closest vocabulary words, passages are ranked by the engine.
 */
export async function searchKnowledge(store: KnowledgeStore, botId: string, input: SearchInput, now: number, semantic?: SemanticRanking): Promise<SearchResult[]> {
  if (input.query.length > MAX_QUERY_CHARS) throw errors.invalidQuery(`query must be at most ${MAX_QUERY_CHARS} characters`)
  const limit = Math.min(Math.max(input.limit ?? SEARCH_LIMIT.default, 1), SEARCH_LIMIT.max)
  let any: Record<string, string>[] | undefined
  if (input.knowledgeBaseIds !== undefined) {
    any = []
    for (const id of input.knowledgeBaseIds) {
      const kb = await store.getKnowledgeBase(botId, id)
      if (!kb) throw errors.notFound('Knowledge base', id)
      any.push(...kbSelection(kb))
    }
  }
  const terms = queryTerms(input.query)
  if (terms.length === 0) return []
  const expanded = await expandTerms(store, botId, terms)
  const files = { all: input.tags, any }
  // The lexical ranking: candidates on the question's own words, and on those plus WordNet synonyms/hypernyms,
  // reranked together (rank.ts); `n` passages of it.
  const expansions = semanticExpansions(terms)
  const lexical = async (n: number) => {
    const candidates = Math.max(n, RANKING.candidates)
    const wideTerms = [...expanded, ...expansions.map((e) => e.term)]
    // Document frequencies of every term: they choose the terms the engine is asked about (candidateTerms). The
    // rerank weighs the question's own words by theirs; expansions' are estimated from the candidates (rank.ts).
    const all = await termStats(store, botId, wideTerms)
    const stats: TermStats = { total: all.total, df: new Map(expanded.flatMap((t) => (all.df.has(t) ? [[t, all.df.get(t)!] as const] : []))) }
    const own = RANKING.ownQuery || !expansions.length ? await store.searchPassages({ botId, terms: candidateTerms(expanded, all), files, now, limit: candidates }) : []
    const wide = expansions.length ? await store.searchPassages({ botId, terms: candidateTerms(wideTerms, all), files, now, limit: RANKING.ownQuery ? candidates : 2 * candidates }) : []
    const ranked = rerank(expanded, expansions, own, wide, RANKING.prfTerms ? Math.max(n, 2 * candidates) : n, stats)
    if (!RANKING.prfTerms || ranked.length < RANKING.prfDocs) return ranked.slice(0, n)
    // Pseudo-relevance feedback: words shared by the best passages, rare among the candidates, searched as expansions.
    const pool = [...own, ...wide]
    const inPool = new Map<string, number>()
    for (const h of pool) for (const w of new Set(words(h.content))) inPool.set(w, (inPool.get(w) ?? 0) + 1)
    const asked = new Set(wideTerms.map(stem))
    const shared = new Map<string, number>()
    for (const h of ranked.slice(0, RANKING.prfDocs)) for (const w of new Set(words(`${h.title} ${h.content}`))) {
      if (w.length >= 4 && !/\d/.test(w) && !isStopWord(w) && !asked.has(stem(w))) shared.set(w, (shared.get(w) ?? 0) + 1)
    }
    const feedback = [...shared].filter(([w, k]) => k >= 2 && (inPool.get(w) ?? 0) <= pool.length * RANKING.prfMaxShare)
      .sort((a, b) => b[1] - a[1] || (inPool.get(a[0]) ?? 0) - (inPool.get(b[0]) ?? 0) || a[0].localeCompare(b[0]))
      .slice(0, RANKING.prfTerms).map(([w]) => ({ term: w, weight: RANKING.prfWeight, of: '' }))
    if (feedback.length === 0) return ranked.slice(0, n)
    const more = await store.searchPassages({ botId, terms: candidateTerms(feedback.map((f) => f.term), await termStats(store, botId, feedback.map((f) => f.term))), files, now, limit: candidates })
    const seen = new Set(pool.map((h) => h.id))
    const extra = more.filter((h) => !seen.has(h.id)).map((h) => ({ ...h, score: 0 }))
    return rerank(expanded, [...expansions, ...feedback], own.length ? [...own, ...extra] : own, own.length ? wide : [...wide, ...extra], n, stats)
  }
  // Hybrid retrieval (embeddings/fusion.ts): the lexical ranking, fused with or reranked by the semantic signal when
  // it can judge every candidate; the cosines it ranked with give each hit its relevance (none: lexical relevance).
  const { hits: fused, cosines } = await hybridRanking(semantic, { botId, query: input.query, files, now, limit }, lexical)
  const relevance = relevanceOf(fused, expanded, await termStats(store, botId, expanded), cosines, semantic?.kind ?? 'endpoint')
  const hits: SearchResult[] = fused.map((h, i) => ({ ...h, relevance: relevance[i]! }))
  if (!input.withContext) return hits
  const depth = Math.min(Math.max(input.contextDepth ?? 1, 0), MAX_CONTEXT_DEPTH)
  return Promise.all(hits.map(async (hit) => {
    const around = await store.passagesAround(botId, hit.fileId, hit.position, depth)
    return {
      ...hit,
      context: around.map((p) => ({
        id: p.id, text: p.content, offset: p.position - hit.position,
        type: p.position < hit.position ? 'preceding' as const : p.position > hit.position ? 'subsequent' as const : 'current' as const,
      })),
    }
  }))
}

/**
 * The terms a candidate query asks the engine about: the rarest first, while the passages containing them add up to
 * at most RANKING.candidateBudget (at least the rarest one). The engine's cost grows with those postings: a
 * common word ("use", "file") matches half of a large knowledge base, and every match would be scored to keep
 * the best few dozen. Common words rarely decide which passages are candidates (BM25 weighs them by their low
 * IDF); they still count in the rerank, which scores every candidate on all the question's words (Lucene's
 * "common terms" query does the same). Words no passage contains are dropped.
 */
export function candidateTerms(terms: string[], stats: TermStats): string[] {
  const known = [...new Set(terms)].filter((t) => (stats.df.get(t) ?? 1) > 0)
  known.sort((a, b) => (stats.df.get(a) ?? 0) - (stats.df.get(b) ?? 0))
  const out: string[] = []
  let postings = 0
  for (const t of known) {
    const df = stats.df.get(t) ?? 0
    if (out.length > 0 && postings + df > RANKING.candidateBudget) break
    out.push(t)
    postings += df
  }
  return out
}

/** Document frequencies per store and bot, reused for a minute (they only weigh terms: slightly stale is fine). */
const STATS_TTL_MS = 60_000
const STATS_CACHE = 5000
const statsCache = new WeakMap<KnowledgeStore, Map<string, { total: number; df: number; at: number }>>()

async function termStats(store: KnowledgeStore, botId: string, terms: string[]): Promise<TermStats> {
  let cache = statsCache.get(store)
  if (!cache) statsCache.set(store, (cache = new Map()))
  const now = Date.now()
  const df = new Map<string, number>()
  let total = -1
  const missing: string[] = []
  for (const t of new Set(terms)) {
    const hit = cache.get(`${botId}\u0000${t}`)
    if (hit && now - hit.at < STATS_TTL_MS) {
      df.set(t, hit.df)
      total = hit.total
    } else missing.push(t)
  }
  if (missing.length > 0 || total < 0) {
    const fresh = await store.termFrequencies(botId, missing)
    total = fresh.total
    for (const [t, n] of fresh.df) {
      df.set(t, n)
      if (cache.size >= STATS_CACHE) cache.delete(cache.keys().next().value!)
      cache.set(`${botId}\u0000${t}`, { total, df: n, at: now })
    }
  }
  return { total, df }
}

/** Which files a knowledge base selects: files tagged kbId=<its id>, or carrying all of its tags. */
export function kbSelection(kb: KnowledgeBaseRow): Record<string, string>[] {
  const sets: Record<string, string>[] = [{ [KB_ID_TAG]: kb.id }]
  if (Object.keys(kb.tags).length > 0) sets.push(kb.tags)
  return sets
}

/**
 * Knowledge bases, search, and the background indexer. Indexing runs one file at a time in this process;
 * the file row is the queue (status indexing_pending), so files left pending by a restart are picked up
 * again by start(). Every write is a compare-and-set on the file's blob: a file replaced or deleted while
 * being indexed never ends up with stale passages.
 */
export class KnowledgeService {
  private readonly queue: { botId: string; fileId: string }[] = []
  private running: Promise<void> | undefined
  private stopped = false
  /** This instance's name on indexing claims. */
  private readonly instanceId = uuidv7()
  /** Progress of the file being indexed (passages written / total), for the Files API's status. */
  private readonly progress = new Map<string, { passagesIndexed: number; passagesTotal: number }>()

  constructor(private readonly deps: KnowledgeServiceDeps) {}

  /** Passages written so far for a file this instance is indexing. */
  progressOf(fileId: string): { passagesIndexed: number; passagesTotal: number } | undefined {
    return this.progress.get(fileId)
  }

  // ---- knowledge bases ----

  async createKnowledgeBase(botId: string, input: { name: string; tags?: Record<string, string> | undefined }): Promise<KnowledgeBaseRow> {
    const now = this.deps.clock()
    return this.deps.store.createKnowledgeBase({ id: `kb_${uuidv7()}`, botId, name: checkName(input.name), tags: checkTags(input.tags ?? {}), createdAt: now, updatedAt: now })
  }

  async updateKnowledgeBase(botId: string, id: string, input: { name: string; tags?: Record<string, string | null> | undefined }): Promise<KnowledgeBaseRow> {
    const kb = await this.getKnowledgeBase(botId, id)
    const tags = { ...kb.tags }
    for (const [k, v] of Object.entries(input.tags ?? {})) {
      if (v === null) delete tags[k]
      else tags[k] = v
    }
    const updated = await this.deps.store.updateKnowledgeBase(botId, id, { name: checkName(input.name), tags: checkTags(tags) }, this.deps.clock())
    if (!updated) throw errors.notFound('Knowledge base', id)
    return updated
  }

  async deleteKnowledgeBase(botId: string, id: string): Promise<void> {
    if (!(await this.deps.store.deleteKnowledgeBase(botId, id))) throw errors.notFound('Knowledge base', id)
  }

  async getKnowledgeBase(botId: string, id: string): Promise<KnowledgeBaseRow> {
    const kb = await this.deps.store.getKnowledgeBase(botId, id)
    if (!kb) throw errors.notFound('Knowledge base', id)
    return kb
  }

  listKnowledgeBases(botId: string, input: { nextToken?: string | undefined; pageSize?: number | undefined; tags?: Record<string, string> | undefined }): Promise<Page<KnowledgeBaseRow>> {
    return this.deps.store.listKnowledgeBases(botId, input.tags, { after: input.nextToken, limit: Math.min(input.pageSize ?? KB_PAGE_SIZE.default, KB_PAGE_SIZE.max) })
  }

  // ---- search ----

  search(botId: string, input: SearchInput): Promise<SearchResult[]> {
    return searchKnowledge(this.deps.store, botId, input, this.deps.clock(), this.deps.embeddings)
  }

  listFilePassages(botId: string, fileId: string, page: { nextToken?: string | undefined; limit: number }): Promise<Page<PassageRow>> {
    return this.deps.store.listFilePassages(botId, fileId, { after: page.nextToken, limit: page.limit })
  }

  // ---- caller-given passages and copies ----

  /**
   * Replaces the passages of a file with content by the caller's (setFilePassages) and marks it indexing_completed.
   * Holds the file's indexing claim meanwhile, so the background indexer never mixes its passages in: a file
   * being indexed right now is a 409 (retry when its status settles).
   */
  async setFilePassages(file: FileRow, input: PassageInput[]): Promise<void> {
    const passages = callerPassages(file.key, checkPassages(input))
    if (!file.blobName || !CONTENT_STATUSES.includes(file.status)) {
      throw errors.invalidPayload(`The file's upload has not landed (status ${file.status}): upload its content before setting its passages`)
    }
    const { store, clock } = this.deps
    const owner = `passages-${uuidv7()}`
    if (!(await store.claimIndexing(file.id, file.blobName, owner, clock(), clock() - CLAIM_STALE_MS))) {
      throw new ApiError('ResourceLockedConflict', 'The file is being indexed; retry once its status is indexing_completed or indexing_failed')
    }
    try {
      if (!(await this.writePassages(file, file.blobName, passages))) {
        throw new ApiError('ResourceLockedConflict', 'The file\'s content changed or is being uploaded; retry once the upload has landed')
      }
    } finally {
      await store.releaseIndexing(file.id, owner).catch(() => {})
    }
  }

  /**
   * A copy of `source` was created (copyFile, same bytes): it takes the source's passages as they are
   * (including caller-given ones) when the source finished indexing; otherwise an indexed copy goes through
   * the indexer like an upload.
   */
  async copied(source: FileRow, copy: FileRow): Promise<FileRow> {
    if (source.status === 'indexing_completed' && copy.blobName) {
      const passages: NewPassage[] = []
      let page: Page<PassageRow> = { items: [], next: undefined }
      do {
        page = await this.deps.store.listFilePassages(source.botId, source.id, { after: page.next, limit: COPY_PAGE })
        passages.push(...page.items.map(({ position, title, content, meta }) => ({ position, title, content, meta })))
      } while (page.next)
      if (await this.writePassages(copy, copy.blobName, passages)) return (await this.deps.files.getFile(copy.botId, copy.id)) ?? copy
    }
    return this.uploaded(copy)
  }

  /** Replaces the file's passages (compare-and-set on its blob) and adds their words to the bot's vocabulary. */
  private async writePassages(file: FileRow, blobName: string, passages: NewPassage[]): Promise<boolean> {
    const { store, clock } = this.deps
    if (!(await store.setPassages(file.botId, file.id, blobName, passages, clock()))) return false
    await store.addTerms(file.botId, passages.flatMap((p) => vocabulary(`${p.title}\n${p.content}`)))
    await this.deps.embeddings?.passagesReplaced(file.id)
    return true
  }

  // ---- indexing ----

  /** Called when an indexed file's upload landed: the file becomes indexing_pending and is queued. */
  async uploaded(file: FileRow): Promise<FileRow> {
    if (!file.index || !file.blobName) {
      // Re-uploaded without `index`: passages of the earlier indexed content are garbage.
      if (!file.index) await this.deps.store.deleteFilePassages(file.botId, file.id)
      return file
    }
    const pending = await this.deps.store.markIndexingPending(file.botId, file.id, file.blobName, this.deps.clock())
    if (!pending) return file
    this.enqueue(pending.botId, pending.id)
    return pending
  }

  /** Drops a deleted file's passages (PostgreSQL cascades; SQLite's FTS table cannot). */
  async removed(file: FileRow): Promise<void> {
    await this.deps.store.deleteFilePassages(file.botId, file.id)
  }

  /** Picks up files left indexing_pending (by a restart, or by another instance that died). */
  async start(): Promise<void> {
    this.stopped = false
    const pending = await this.deps.store.listPendingIndexing(RESUME_BATCH)
    for (const f of pending) this.enqueue(f.botId, f.id)
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.queue.length = 0
    await this.running
  }

  /** Resolves when the queue is empty (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  /** The vector ranking searches fuse with (the runtime's bot searches use the same), if any. */
  get semanticRanking(): SemanticRanking | undefined {
    return this.deps.embeddings
  }

  /** The embeddings half, if any: tests and benchmarks pause its backfill (backfill.stop/start) to search a partly embedded index. */
  get embeddings(): KnowledgeEmbeddings | undefined {
    return this.deps.embeddings
  }

  /** Resolves when the queue is empty and every passage has its vector (tests, benchmarks). */
  async vectorsIdle(): Promise<void> {
    await this.idle()
    await this.deps.embeddings?.backfill.idle()
  }

  private enqueue(botId: string, fileId: string): void {
    if (this.stopped || this.queue.some((q) => q.fileId === fileId)) return
    this.queue.push({ botId, fileId })
    if (!this.running) {
      this.running = this.drain().finally(() => {
        this.running = undefined
      })
    }
  }

  private async drain(): Promise<void> {
    // Files handled by this drain: a file another instance holds (or that failed) is not retried in a loop.
    const seen = new Set<string>()
    for (let next = this.queue.shift(); next && !this.stopped; next = this.queue.shift()) {
      seen.add(next.fileId)
      try {
        await this.index(next.botId, next.fileId)
      } catch (err) {
        this.deps.warn?.({ fileId: next.fileId, err }, 'indexing failed')
      } finally {
        this.progress.delete(next.fileId)
      }
      if (this.queue.length === 0 && !this.stopped) {
        // More may have been left pending meanwhile by another instance or a lost enqueue.
        for (const f of await this.deps.store.listPendingIndexing(RESUME_BATCH).catch(() => [])) {
          if (!seen.has(f.id)) this.queue.push({ botId: f.botId, fileId: f.id })
        }
      }
    }
  }

  private async index(botId: string, fileId: string): Promise<void> {
    const { store, blobs, clock } = this.deps
    const file = await this.deps.files.getFile(botId, fileId)
    if (!file || file.status !== 'indexing_pending' || !file.blobName) return
    const blobName = file.blobName
    // Another instance may be indexing this content (a shared PostgreSQL store): leave it to that one.
    if (!(await store.claimIndexing(fileId, blobName, this.instanceId, clock(), clock() - CLAIM_STALE_MS))) return
    try {
      // Read again under the claim: setFilePassages may have completed the file in between.
      const current = await this.deps.files.getFile(botId, fileId)
      if (current?.status !== 'indexing_pending' || current.blobName !== blobName) return
      await this.indexClaimed(current, blobName)
    } finally {
      await store.releaseIndexing(fileId, this.instanceId).catch(() => {})
    }
  }

  private async indexClaimed(file: FileRow, blobName: string): Promise<void> {
    const { store, blobs, clock } = this.deps
    const { botId, id: fileId } = file
    // The extractors (HTML, CSV, the PDF layout; unpdf itself on the first PDF) are loaded by the first file indexed,
    // not at start: an instance that never indexes a file never pays for them (idle memory, #16).
    const { ExtractionError, extractPassages } = await import('./extract.js')
    let failure: string | null = null
    try {
      const blob = await blobs.get(blobName)
      if (!blob) throw new ExtractionError('The file content is missing')
      const chunks: Buffer[] = []
      for await (const chunk of blob.stream) chunks.push(chunk as Buffer)
      const passages = await extractPassages(Buffer.concat(chunks), file.contentType, file.key)
      if (passages.length === 0) throw new ExtractionError('No text could be extracted from the file')
      // Written in batches with a yield in between: a large file shares the database and the event loop.
      await store.deleteFilePassages(botId, fileId).catch(() => {})
      this.progress.set(fileId, { passagesIndexed: 0, passagesTotal: passages.length })
      for (let i = 0; i < passages.length; i += PASSAGE_BATCH) {
        if (this.stopped) return
        const batch = passages.slice(i, i + PASSAGE_BATCH)
        await store.addPassages(botId, fileId, blobName, batch)
        await store.addTerms(botId, batch.flatMap((p) => vocabulary(`${p.title}\n${p.content}`)))
        this.progress.set(fileId, { passagesIndexed: Math.min(i + PASSAGE_BATCH, passages.length), passagesTotal: passages.length })
        await yieldToLoop()
      }
    } catch (err) {
      if (!(err instanceof ExtractionError)) throw err
      failure = err.message
    }
    if ((await store.completeIndexing(botId, fileId, blobName, failure, clock())) && failure === null) await this.deps.embeddings?.passagesReplaced(fileId)
  }
}

function checkPassages(input: PassageInput[]): PassageInput[] {
  if (input.length > MAX_SET_PASSAGES) throw errors.invalidPayload(`passages accepts at most ${MAX_SET_PASSAGES} passages`)
  input.forEach((p, i) => {
    if (p.content.trim().length === 0 || p.content.length > MAX_PASSAGE_CHARS) {
      throw errors.invalidPayload(`passages[${i}].content must be 1 to ${MAX_PASSAGE_CHARS} characters, not only whitespace`)
    }
    if (p.type !== undefined && !(PASSAGE_TYPES as readonly string[]).includes(p.type)) throw errors.invalidPayload(`passages[${i}].type must be one of ${PASSAGE_TYPES.join(', ')}`)
    if (p.pageNumber !== undefined && !(Number.isSafeInteger(p.pageNumber) && p.pageNumber >= 0 && p.pageNumber <= MAX_PAGE_NUMBER)) {
      throw errors.invalidPayload(`passages[${i}].pageNumber must be an integer from 0 to ${MAX_PAGE_NUMBER}`)
    }
  })
  return input
}

/**
 * Caller-given passages as the index stores them, in their order: like the extractor's, each is titled by the
 * file name and the latest title and subtitle passages above it (headings weigh more in the ranking).
 */
function callerPassages(key: string, input: PassageInput[]): NewPassage[] {
  const name = key.split(/[\\/]/).pop() || key
  const heading = (content: string) => content.trim().replace(/^#+\s*/, '').slice(0, MAX_HEADING_CHARS)
  let title = ''
  let subtitle = ''
  return input.map((p, position) => {
    if (p.type === 'title') [title, subtitle] = [heading(p.content), '']
    else if (p.type === 'subtitle') subtitle = heading(p.content)
    return {
      position,
      title: [name, title, subtitle].filter(Boolean).join(' › '),
      content: p.content,
      meta: { ...(p.type !== undefined && { subtype: p.type }), ...(p.pageNumber !== undefined && { pageNumber: p.pageNumber }) },
    }
  })
}

function checkName(name: string): string {
  const trimmed = name.trim()
  if (trimmed.length === 0 || name.length > KB_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) {
    throw errors.invalidPayload(`name must be 1 to ${KB_NAME_MAX} characters without control characters`)
  }
  return trimmed
}

function checkTags(tags: Record<string, string>): Record<string, string> {
  const entries = Object.entries(tags)
  if (entries.length > 50) throw errors.invalidPayload('A knowledge base has at most 50 tags')
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > 100 || v.length > 1000 || /[\u0000-\u001f\u007f]/.test(k + v)) {
      throw errors.invalidPayload('Tag names must be 1 to 100 characters and values at most 1000, without control characters')
    }
  }
  return tags
}
