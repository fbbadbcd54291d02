import type { PassageHit } from '../../store/knowledge-store.js'
import { words } from './query.js'
import { expandWord } from './wordnet.js'

/**
 * The built-in semantic signal and the final ranking, the same on both engines. The engine ranks
 * candidates twice (bm25 / ts_rank): on the question's own terms (with typo corrections), and on those
 * plus their WordNet synonyms and hypernyms. Each candidate then gets
 *
 *   score = lexical · own/maxOwn + expanded · exp/maxExp + heading · H + coverage · C
 *
 * where H is how much of the question its heading (the last part of its title: in an FAQ, the question
 * it answers) shares, and C how much of the question the passage and its heading path cover; in both a
 * synonym counts `synonymWeight` and a hypernym `hypernymWeight` of an own word. The weights were tuned on
 * the tuning half of the real-document evaluation (test/knowledge/real-retrieval.ts) only.
 */
export const RANKING = {
  /** Candidates read from the engine per query (each of the two). */
  candidates: 40,
  lexical: 1,
  expanded: 0.5,
  heading: 0.6,
  coverage: 0.4,
  synonymWeight: 0.5,
  hypernymWeight: 0.3,
  /** Expansion words kept per question word. */
  perTerm: 6,
  maxExpansions: 30,
}

/** A light suffix-stripping stem, enough to match "installed" with "install" or "packages" with "package". */
export function stem(word: string): string {
  let w = word.toLowerCase()
  if (w.length <= 3) return w
  for (const [suffix, repl] of [['ational', 'ate'], ['ization', 'ize'], ['fulness', 'ful'], ['iveness', 'ive'], ['ations', 'ate'], ['ation', 'ate'], ['ies', 'y'], ['ied', 'y'], ['ing', ''], ['ed', ''], ['es', ''], ['s', ''], ['ly', ''], ['ment', ''], ['er', '']] as const) {
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

/** The ranked union of both candidate lists (`limit` best), scores as described above. */
export function rerank(terms: string[], expansions: Expanded[], own: PassageHit[], expanded: PassageHit[], limit: number): PassageHit[] {
  const key = (h: PassageHit) => `${h.fileId}:${h.position}`
  const maxOwn = Math.max(0, ...own.map((h) => h.score)) || 1
  const maxExp = Math.max(0, ...expanded.map((h) => h.score)) || 1
  const byKey = new Map<string, { hit: PassageHit; own: number; exp: number }>()
  for (const h of own) byKey.set(key(h), { hit: h, own: Math.max(h.score, 0) / maxOwn, exp: 0 })
  for (const h of expanded) {
    const e = byKey.get(key(h)) ?? { hit: h, own: 0, exp: 0 }
    e.exp = Math.max(h.score, 0) / maxExp
    byKey.set(key(h), e)
  }
  const ownStems = [...new Set(terms.map(stem))]
  const synonymsOf = new Map<string, { stem: string; weight: number }[]>()
  for (const e of expansions) {
    const list = synonymsOf.get(stem(e.of)) ?? []
    list.push({ stem: stem(e.term), weight: e.weight })
    synonymsOf.set(stem(e.of), list)
  }
  /** Share of the question's words matched in `set` (a synonym matching for part of a word). */
  const share = (set: Set<string>) => {
    if (ownStems.length === 0) return 0
    let sum = 0
    for (const s of ownStems) {
      if (set.has(s)) sum += 1
      else sum += Math.max(0, ...(synonymsOf.get(s) ?? []).filter((x) => set.has(x.stem)).map((x) => x.weight))
    }
    return sum / ownStems.length
  }
  const scored = [...byKey.values()].map((e) => {
    const path = e.hit.title.split(' › ')
    const heading = new Set(words(path[path.length - 1] ?? '').map(stem))
    const all = new Set(words(`${e.hit.title}\n${e.hit.content}`).map(stem))
    const score = RANKING.lexical * e.own + RANKING.expanded * e.exp + RANKING.heading * share(heading) + RANKING.coverage * share(all)
    return { ...e.hit, score }
  })
  return scored.sort((a, b) => b.score - a.score || a.fileId.localeCompare(b.fileId) || a.position - b.position).slice(0, limit)
}
