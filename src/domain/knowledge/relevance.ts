import type { PassageHit } from '../../store/knowledge-store.js'
import { words } from './query.js'
import { stem, type TermStats } from './rank.js'

/**
 * The relevance threshold of knowledge search ("I don't know"). Ranks are relative: the best passage of a search
 * is returned however unrelated it is. Each hit is also given an absolute relevance in [0, 1]:
 *
 *   relevance = coverage                          (lexical only: no vector for the query)
 *   relevance = max(coverage, cosine)             (an embeddings endpoint: its model's cosine, as it is)
 *   relevance = (1 − w) · coverage + w · c        (built-in word vectors or sentence model: c is the passage's cosine with the
 *                                                  query above the signal's floor, rescaled to [0, 1], 0 for a passage
 *                                                  that has no vector)
 *
 * The cosines are those the search was ranked with: with the sentence model, every candidate's or none (a search
 * whose candidates are not all embedded yet is lexical, its relevance coverage alone: fusion.ts), so the hits of one
 * search are never judged half on coverage, half on cosines.
 *
 * where coverage is the IDF-weighted share of the question's own words (stemmed) found in the passage or its
 * heading path. A bot's search keeps hits of relevance ≥ the threshold (PARLEY_KB_MIN_SCORE, src/config.ts):
 * none left means the bot does not know. Calibrated on the tuning half of the real-document evaluation and on
 * off-topic questions (test/fixtures/kb-real/off-topic.json), bench/kb-threshold.ts.
 */
export const RELEVANCE = {
  cosineWeight: 0.5,
  /**
   * Cosines at or below this count as no evidence (averaged word vectors of unrelated English texts are still
   * ~0.5 alike); above, rescaled to [0, 1]. The same threshold then fits lexical-only and hybrid relevance.
   */
  cosineFloor: 0.5,
  /**
   * The built-in sentence model's weight and floor (its cosines run lower than averaged word vectors'). Tuning half
   * and off-topic questions at the default threshold 0.25, SQLite (bench/kb-threshold.ts): floor 0.1 silenced 35/34
   * of 40 off-topic questions (HTML/PDF) and cost 1/1 answerable top-3 passage; 0.2: 35/35 and 2/2; 0.3: 38/37 and 6/6.
   */
  sentenceWeight: 0.5,
  sentenceFloor: 0.1,
}

/** Default of PARLEY_KB_MIN_SCORE (bench/kb-threshold.ts). */
export const KB_MIN_SCORE_DEFAULT = 0.25

/** Relevance of each hit (same order), from the question's terms, their document frequencies and the vector cosines. */
export function relevanceOf(hits: PassageHit[], terms: string[], stats: TermStats, cosines: Map<string, number> | undefined, kind: 'endpoint' | 'sentence' | 'words'): number[] {
  const idf = (t: string) => Math.log(1 + (stats.total + 1) / ((stats.df.get(t) ?? 0) + 0.5))
  const weighted = [...new Set(terms)].map((t) => ({ s: stem(t), w: idf(t) }))
  const total = weighted.reduce((n, t) => n + t.w, 0)
  return hits.map((hit) => {
    const present = new Set(words(`${hit.title}\n${hit.content}`).map(stem))
    const coverage = total > 0 ? weighted.reduce((n, t) => n + (present.has(t.s) ? t.w : 0), 0) / total : 0
    if (!cosines || cosines.size === 0) return round(coverage)
    // A real embeddings model's cosine is evidence of its own (a passage in other words, no word in common).
    if (kind === 'endpoint') return round(Math.max(coverage, cosines.get(hit.id) ?? 0))
    const [w, floor] = kind === 'sentence' ? [RELEVANCE.sentenceWeight, RELEVANCE.sentenceFloor] : [RELEVANCE.cosineWeight, RELEVANCE.cosineFloor]
    const cosine = Math.max(0, ((cosines.get(hit.id) ?? 0) - floor) / (1 - floor))
    return round((1 - w) * coverage + w * cosine)
  })
}

const round = (x: number) => Math.round(x * 1e4) / 1e4
