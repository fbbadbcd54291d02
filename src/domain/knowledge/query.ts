import type { KnowledgeStore } from '../../store/knowledge-store.js'

/**
 * Query processing shared by both engines: words (letters and digits only, so no FTS syntax ever reaches
 * the index), English stop words dropped (with the filler words of rambling questions), terms OR-ed and left to the ranking (bm25 / ts_rank) — and a
 * light typo tolerance: a word absent from the bot's vocabulary is also searched as its closest known
 * words (edit distance 1, or 2 for long words).
 */

export const MAX_QUERY_CHARS = 4096
const MAX_TERMS = 32

const STOP_WORDS = new Set(`a about above after again against all am an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into
is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some
such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves get got can't cannot i'm i've want need please tell know
see actually really just exactly thing things stuff something anything somebody someone anyone anybody ok okay hi hello hey thanks
thank honestly basically also still even ever might must shall sure etc wondering wonder trying guess maybe
isn doesn don didn won wouldn shouldn couldn aren im ive youre theyre`.split(/\s+/))

export const isStopWord = (word: string): boolean => STOP_WORDS.has(word)

/** Lowercased words of the text (NFKC, diacritics kept: the index folds them itself). */
export function words(text: string): string[] {
  // ASCII text (most passages) needs no normalisation, and its letters and digits are a-z and 0-9: a faster match.
  if (!NON_ASCII.test(text)) return text.toLowerCase().match(/[a-z0-9]+/g) ?? []
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}
const NON_ASCII = /[^\x00-\x7f]/

export function queryTerms(query: string): string[] {
  const unique = [...new Set(words(query.slice(0, MAX_QUERY_CHARS)).filter((w) => w.length > 1 && w.length <= 64 && !STOP_WORDS.has(w)))]
  return unique.slice(0, MAX_TERMS)
}

/** Words worth keeping in the vocabulary used for corrections. */
export function vocabulary(text: string): string[] {
  return [...new Set(words(text).filter((w) => w.length >= 4 && w.length <= 32 && !/^\d+$/.test(w)))]
}

/** Optimal string alignment distance, stopping early beyond `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let prev2: number[] = []
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1)
      row.push(v)
      best = Math.min(best, v)
    }
    if (best > max) return max + 1
    prev2 = prev
    prev = row
  }
  return prev[b.length]!
}

/** Terms plus corrections of unknown words (the bot's vocabulary, same first letter). */
export async function expandTerms(store: KnowledgeStore, botId: string, terms: string[]): Promise<string[]> {
  const candidates = terms.filter((t) => t.length >= 4 && !/^\d+$/.test(t))
  const known = await store.knownTerms(botId, candidates)
  const extra: string[] = []
  for (const term of candidates) {
    if (known.has(term)) continue
    const max = term.length >= 7 ? 2 : 1
    const options = await store.termsWithPrefix(botId, term[0]!, 5000)
    const scored = options.map((o) => ({ o, d: editDistance(term, o, max) })).filter((x) => x.d <= max).sort((x, y) => x.d - y.d)
    const best = scored[0]?.d
    extra.push(...scored.filter((x) => x.d === best).slice(0, 3).map((x) => x.o))
  }
  return [...new Set([...terms, ...extra])]
}
