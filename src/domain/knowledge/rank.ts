import type { PassageHit } from '../../store/knowledge-store.js'
import { words } from './query.js'
import { expandWord } from './wordnet.js'

/**
 * The built-in semantic signal and the final ranking, the same on both engines. The engine (FTS5 bm25 /
 * PostgreSQL ts_rank) only gathers candidates, twice: on the question's own terms (with typo corrections),
 * and on those plus their WordNet synonyms and hypernyms. Each candidate is then scored here:
 *
 *   score = lexical · B(own)/max + expanded · B(expansions)/max + engine · engineScore/max
 *         + heading · H + coverage · C
 *
 * B is BM25 over the passage (its title counted `titleWeight` times) with the bot's document frequencies
 * (so PostgreSQL, whose ts_rank has no IDF, ranks like SQLite), an expansion word counting `synonymWeight`
 * or `hypernymWeight` of an own word; H is how much of the question the passage's heading shares (the last
 * part of its title: in an FAQ, the question it answers), C how much of it the passage and its heading path
 * cover. The weights were tuned on the tuning half of the real-document evaluation
 * (test/knowledge/real-retrieval.ts, bench/kb-tune.ts) only.
 */
export const RANKING = {
  /** Candidates read from the engine per query (each of the two). */
  candidates: 40,
  /** A separate candidate query on the question's own words (else one query, own words and expansions, twice as many candidates). */
  ownQuery: 0,
  /**
   * Passages a candidate query may match, summed over its terms (knowledge-service.ts candidateTerms): bounds the
   * engine's work on large knowledge bases. Tuning half (bench/kb-tune.ts, SQLite, lexical): the same top-3 and MRR
   * from no bound down to 1000 (the evaluation's 737 passages rarely reach it); over 20,000 passages it cut the
   * candidate query ~5× (bench/kb-latency.ts).
   */
  candidateBudget: 2000,
  /**
   * Pseudo-relevance feedback (knowledge-service.ts): words of the best `prfDocs` passages added as expansions (0: off).
   * Tuning half, built-in vectors on: SQLite top-3 157 → 161 (of 208) at 5 words × 0.5, but PostgreSQL 154 → 150:
   * not a gain that holds across engines, so off.
   */
  prfTerms: 0,
  prfDocs: 3,
  prfWeight: 0.3,
  /** A feedback word must be in at most this share of the candidates. */
  prfMaxShare: 0.2,
  lexical: 1,
  expanded: 0.5,
  engine: 0.3,
  heading: 0.6,
  coverage: 0.4,
  synonymWeight: 0.5,
  hypernymWeight: 0.3,
  titleWeight: 3,
  k1: 1.2,
  b: 0.75,
  /** Whether H and C weigh the question's words by IDF (else equally). */
  idfShare: 0,
  /** Expansion words kept per question word. */
  perTerm: 6,
  maxExpansions: 30,
}

/** Stems of words seen lately (a search stems every word of its ~100 candidates: the same words, over and over). */
const STEMS = new Map<string, string>()
const STEM_CACHE = 50_000

/** A light suffix-stripping stem, enough to match "installed" with "install" or "packages" with "package". */
export function stem(word: string): string {
  const hit = STEMS.get(word)
  if (hit !== undefined) return hit
  const s = computeStem(word)
  if (STEMS.size >= STEM_CACHE) STEMS.clear()
  STEMS.set(word, s)
  return s
}

function computeStem(word: string): string {
  let w = word.toLowerCase()
  if (w.length <= 3) return w
  for (const [suffix, repl] of [['ational', 'ate'], ['ization', 'ize'], ['fulness', 'ful'], ['iveness', 'ive'], ['ations', ''], ['ation', ''], ['ies', 'y'], ['ied', 'y'], ['ing', ''], ['ed', ''], ['es', ''], ['s', ''], ['ly', ''], ['ment', ''], ['er', '']] as const) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3 && !(suffix === 's' && w.endsWith('ss'))) {
      w = w.slice(0, -suffix.length) + repl
      break
    }
  }
  if (w.length > 3 && w.at(-1) === w.at(-2) && !/[lsz]/.test(w.at(-1)!)) w = w.slice(0, -1)
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w
}

export interface Expanded { term: string; weight: number; of: string }

/** WordNet expansions of the question's words (not already among them), weighted below them. */
export function semanticExpansions(terms: string[]): Expanded[] {
  const own = new Set(terms.map(stem))
  const out = new Map<string, Expanded>()
  for (const term of terms) {
    if (term.length < 3 || /\d/.test(term)) continue
    const { synonyms, hypernyms } = expandWord(term)
    let n = 0
    for (const [list, weight] of [[synonyms, RANKING.synonymWeight], [hypernyms, RANKING.hypernymWeight]] as const) {
      for (const w of list) {
        if (n >= RANKING.perTerm) break
        const parts = w.split('-').filter((p) => p.length > 1)
        for (const p of parts) {
          const s = stem(p)
          if (own.has(s) || out.has(s) || p.length < 3) continue
          out.set(s, { term: p, weight, of: term })
          n++
        }
      }
    }
  }
  return [...out.values()].sort((a, b) => b.weight - a.weight).slice(0, RANKING.maxExpansions)
}

export interface TermStats { total: number; df: Map<string, number> }

/** The ranked union of both candidate lists (`limit` best), scored as described above. */
export function rerank(terms: string[], expansions: Expanded[], own: PassageHit[], expanded: PassageHit[], limit: number, stats: TermStats): PassageHit[] {
  const key = (h: PassageHit) => `${h.fileId}:${h.position}`
  const maxEngine = Math.max(0, ...own.map((h) => h.score)) || 1
  const pool = new Map<string, { hit: PassageHit; engine: number }>()
  for (const h of own) pool.set(key(h), { hit: h, engine: Math.max(h.score, 0) / maxEngine })
  const maxWide = Math.max(0, ...expanded.map((h) => h.score)) || 1
  for (const h of expanded) if (!pool.has(key(h))) pool.set(key(h), { hit: h, engine: own.length ? 0 : Math.max(h.score, 0) / maxWide })
  if (pool.size === 0) return []

  const ownTerms = [...new Map(terms.map((t) => [stem(t), t])).entries()]
  const expTerms = expansions.map((e) => [stem(e.term), e.term, e.weight] as const)
  const synonymsOf = new Map<string, { stem: string; weight: number }[]>()
  for (const e of expansions) {
    const list = synonymsOf.get(stem(e.of)) ?? []
    list.push({ stem: stem(e.term), weight: e.weight })
    synonymsOf.set(stem(e.of), list)
  }
  const docs = [...pool.values()].map((e) => {
    const path = e.hit.title.split(' › ')
    const titleStems = words(e.hit.title).map(stem)
    const contentStems = words(e.hit.content).map(stem)
    const tf = new Map<string, number>()
    for (const s of titleStems) tf.set(s, (tf.get(s) ?? 0) + RANKING.titleWeight)
    for (const s of contentStems) tf.set(s, (tf.get(s) ?? 0) + 1)
    return { ...e, tf, length: contentStems.length + RANKING.titleWeight * titleStems.length, heading: new Set(words(path[path.length - 1] ?? '').map(stem)) }
  })
  const N = Math.max(stats.total, pool.size)
  /** Candidates containing each stem: estimates the document frequency of terms the engine was not asked about. */
  const poolDf = new Map<string, number>()
  for (const d of docs) for (const s of d.tf.keys()) poolDf.set(s, (poolDf.get(s) ?? 0) + 1)
  const idfs = new Map<string, number>()
  const idf = (term: string) => {
    let v = idfs.get(term)
    if (v === undefined) {
      const known = stats.df.get(term)
      const df = Math.min(Math.max(known ?? ((poolDf.get(stem(term)) ?? 0) * N) / pool.size, 1), N)
      idfs.set(term, (v = Math.log(1 + (N - df + 0.5) / (df + 0.5))))
    }
    return v
  }
  const avg = docs.reduce((n, d) => n + d.length, 0) / docs.length || 1
  const bm25 = (d: (typeof docs)[number], list: readonly (readonly [string, string, number])[]) => {
    let sum = 0
    for (const [s, term, weight] of list) {
      const f = d.tf.get(s)
      if (!f) continue
      sum += weight * idf(term) * (f * (RANKING.k1 + 1)) / (f + RANKING.k1 * (1 - RANKING.b + RANKING.b * d.length / avg))
    }
    return sum
  }
  const ownList = ownTerms.map(([s, t]) => [s, t, 1] as const)
  const shareWeight = (t: string) => (RANKING.idfShare ? idf(t) : 1)
  const ownWeight = ownTerms.reduce((n, [, t]) => n + shareWeight(t), 0) || 1
  /** IDF-weighted share of the question's words matched in `set` (a synonym matching for part of a word). */
  const share = (set: { has(s: string): boolean }) => {
    let sum = 0
    for (const [s, t] of ownTerms) {
      const w = shareWeight(t)
      if (set.has(s)) sum += w
      else {
        let best = 0
        for (const x of synonymsOf.get(s) ?? []) if (x.weight > best && set.has(x.stem)) best = x.weight
        sum += w * best
      }
    }
    return sum / ownWeight
  }
  const raw = docs.map((d) => ({ d, own: bm25(d, ownList), exp: bm25(d, expTerms) }))
  const maxOwn = Math.max(0, ...raw.map((r) => r.own)) || 1
  const maxExp = Math.max(0, ...raw.map((r) => r.exp)) || 1
  const scored = raw.map(({ d, own, exp }) => ({
    ...d.hit,
    score: RANKING.lexical * own / maxOwn + RANKING.expanded * exp / maxExp + RANKING.engine * d.engine
      + RANKING.heading * share(d.heading) + RANKING.coverage * share(d.tf),
  }))
  return scored.sort((a, b) => b.score - a.score || a.fileId.localeCompare(b.fileId) || a.position - b.position).slice(0, limit)
}
