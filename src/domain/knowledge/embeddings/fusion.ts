import type { PassageFileFilter, PassageHit } from '../../../store/knowledge-store.js'

/**
 * Hybrid retrieval: the lexical ranking and the vector ranking fused by reciprocal rank fusion
 * (score = Σ 1 / (k + rank), Cormack et al. 2009). RRF needs no calibration between bm25 / ts_rank and cosine
 * scores, which are not comparable. Without vectors for the query's scope (no service configured, service down,
 * nothing embedded yet) the lexical ranking is returned untouched, scores included.
 */

/** The usual constant: damps the weight of the very first ranks. */
export const RRF_K = 60
/** Candidates taken from each ranking before fusion. */
export const FUSION_POOL = 50

export interface SemanticQuery {
  botId: string
  query: string
  files: PassageFileFilter
  now: number
  limit: number
}

/** A vector ranking of passages for a query; [] when it has nothing to say (never throws for a service failure). */
export interface SemanticRanking {
  rank(query: SemanticQuery): Promise<PassageHit[]>
  /** Its weight in the fusion, the lexical ranking's being 1 (default 1). */
  readonly weight?: number | undefined
  /** 'rerank': only reorders the lexical candidates (score / best + rerankWeight · cosine) instead of RRF. */
  readonly mode?: 'rrf' | 'rerank' | undefined
  /** Whose cosines these are (relevance.ts scales each differently); default 'endpoint'. */
  readonly kind?: 'endpoint' | 'sentence' | 'words' | undefined
  /** The cosine's weight in a rerank (default FUSION.rerankWeight). */
  readonly rerankWeight?: number | undefined
  /** A search of `botId` is about to rank `query` (rerank mode): the query's embedding may start beside the lexical search. */
  prepare?(query: string, botId: string): void
  /**
   * The cosine of each passage with the query, computed directly (rerank mode: a few dozen candidates, in-process)
   * rather than by a nearest-vector scan over every passage: an entry for every passage that has a vector (0 for one
   * that never will, e.g. refused), none for a passage not embedded yet; undefined when the query has no embedding.
   */
  similarity?(query: string, hits: PassageHit[]): Promise<Map<string, number> | undefined>
  /** The cosine of each passage's own heading (last part of its title) with the query (rerank mode; optional). */
  headingSimilarity?(query: string, hits: PassageHit[]): Promise<Map<string, number> | undefined>
  /** RRF mode: whether every one of these passages has its vector (or never will); false while the backfill has not reached some. */
  embedded?(hits: PassageHit[]): Promise<boolean>
  /** How a search was ranked (metrics). */
  ranked?(ranking: Ranking): void
}

/**
 * How a search with a semantic signal was ranked (parley_kb_search_ranking_total): `reranked` / `fused` with the
 * vectors; lexically because some lexical candidate has no vector yet (`lexical_not_embedded`: the backfill has not
 * reached it), because the query could not be embedded in time (`lexical_no_query_vector`: model busy, slow or down),
 * or because the vector ranking found nothing (`lexical_no_vectors`).
 */
export type Ranking = 'reranked' | 'fused' | 'lexical_not_embedded' | 'lexical_no_query_vector' | 'lexical_no_vectors'

/** The ranking step's answer: the passages, the cosines it ranked them with (undefined: lexical), and how. */
export interface RankedPassages {
  hits: PassageHit[]
  cosines: Map<string, number> | undefined
  ranking: Ranking | undefined
}

/**
 * How the built-in word vectors (word-vectors.ts) join the lexical ranking. Measured on the tuning half
 * (bench/kb-tune.ts, SQLite): as an RRF ranking they cost top-3 answers at every weight (HTML/PDF 79/80 of 104
 * lexical → 68/62 at weight 1, 77/76 at 0.1), since SIF averages of word vectors find passages about the same
 * topic rather than the answer; as a rerank of the lexical candidates (score / best + 0.5 · cosine) top-3 stays
 * (79/79) and MRR rises (0.604 → 0.633 HTML, 0.602 → 0.619 PDF). So: 'rerank', weight 0.5. An external
 * embeddings model keeps RRF at weight 1. The built-in model stores no vectors (knowledge-embeddings.ts start()): set
 * to 'rrf' it would find none and search would stay lexical.
 */
/**
 * headingWeight: a cosine of the query with the passage's own heading added to the rerank (question-to-heading matching
 * with the word vectors). Tuning half, SQLite: MRR +0.01 at 0.4 but top-3 79/78 against 80/77 at 0: off.
 */
/**
 * sentenceRerankWeight: the built-in sentence model's cosine in the rerank (score / best + w · cosine). Tuning half,
 * SQLite (bench/kb-sentence-model.ts, every variant measured there): 2 on the passage's text alone was best
 * (HTML/PDF top-3 84/85 of 104 against 79/80 lexical), the word vectors off (with them: 85/83).
 */
export const FUSION = { builtinWeight: 0.3, builtinMode: 'rerank' as 'rrf' | 'rerank', rerankWeight: 0.5, rerankPool: 200, headingWeight: 0, sentenceRerankWeight: 2 }

/** Fused ranking, best first; each hit's score is its (weighted) RRF score. Hits are identified by passage id. */
export function reciprocalRankFusion(rankings: PassageHit[][], limit: number, k = RRF_K, weights: number[] = []): PassageHit[] {
  const fused = new Map<string, { hit: PassageHit; score: number; best: number; first: number }>()
  rankings.forEach((ranking, r) => {
    ranking.forEach((hit, rank) => {
      const entry = fused.get(hit.id) ?? { hit, score: 0, best: Infinity, first: r }
      entry.score += (weights[r] ?? 1) / (k + rank + 1)
      entry.best = Math.min(entry.best, rank)
      fused.set(hit.id, entry)
    })
  })
  // Ties (same score) go to the passage ranked higher somewhere, then to the earlier ranking (the lexical one:
  // a vector ranking always has a next passage, however unrelated), then to document order.
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || a.first - b.first || a.hit.fileId.localeCompare(b.hit.fileId) || a.hit.position - b.hit.position)
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score }))
}

/**
 * The search's ranking step: `lexical(n)` is the lexical search for the n best passages. With a semantic ranking
 * that finds something, both are asked for FUSION_POOL candidates and fused; otherwise the lexical answer as is.
 *
 * It ranks consistently: the candidates are reranked (or fused) only when every one of them has its vector. A file
 * reports `indexing_completed` before the backfill has embedded its passages; reranking then would add the cosine
 * bonus to the embedded candidates only and lift embedded-but-wrong passages above unembedded right ones (issue #24:
 * Debian FAQ held-out HTML top-3 11/40 right after indexing against 22/40 lexical). Until then the answer is the
 * lexical ranking, scores and relevance included (bench/kb-real-fresh.ts).
 */
export async function hybridRanking(
  semantic: SemanticRanking | undefined,
  query: SemanticQuery,
  lexical: (limit: number) => Promise<PassageHit[]>,
): Promise<RankedPassages> {
  if (!semantic) return { hits: await lexical(query.limit), cosines: undefined, ranking: undefined }
  const answer = (hits: PassageHit[], ranking: Ranking, cosines?: Map<string, number>): RankedPassages => {
    semantic.ranked?.(ranking)
    return { hits: hits.slice(0, query.limit), cosines, ranking }
  }
  const pool = Math.max(query.limit, FUSION_POOL)
  if (semantic.mode === 'rerank') {
    semantic.prepare?.(query.query, query.botId)
    const lex = await lexical(pool)
    let cosine: Map<string, number> | undefined
    if (semantic.similarity) {
      cosine = await semantic.similarity(query.query, lex)
      if (!cosine) return answer(lex, 'lexical_no_query_vector')
      if (lex.some((h) => !cosine!.has(h.id))) return answer(lex, 'lexical_not_embedded')
    } else {
      // A nearest-vector scan: a candidate not among the nearest counts as far (cosine 0).
      const byVector = await semantic.rank({ ...query, limit: Math.max(pool, FUSION.rerankPool) })
      if (byVector.length === 0) return answer(lex, 'lexical_no_vectors')
      cosine = new Map(byVector.map((h) => [h.id, h.score]))
    }
    const heading = FUSION.headingWeight && semantic.headingSimilarity ? await semantic.headingSimilarity(query.query, lex) : undefined
    const best = lex[0]?.score || 1
    const weight = semantic.rerankWeight ?? FUSION.rerankWeight
    const reranked = lex.map((hit, i) => ({ hit, i, s: hit.score / best + weight * (cosine.get(hit.id) ?? 0) + FUSION.headingWeight * (heading?.get(hit.id) ?? 0) }))
      .sort((a, b) => b.s - a.s || a.i - b.i).map(({ hit, s }) => ({ ...hit, score: s }))
    return answer(reranked, 'reranked', cosine)
  }
  const byVector = await semantic.rank({ ...query, limit: pool })
  if (byVector.length === 0) return answer(await lexical(query.limit), 'lexical_no_vectors')
  // RRF the same way: a lexical candidate not embedded yet would lack the vector ranking's share the others get.
  const lex = await lexical(pool)
  if (semantic.embedded && !(await semantic.embedded(lex))) return answer(lex, 'lexical_not_embedded')
  const fused = reciprocalRankFusion([lex, byVector], query.limit, RRF_K, [1, semantic.weight ?? 1])
  return answer(fused, 'fused', new Map(byVector.map((h) => [h.id, h.score])))
}
