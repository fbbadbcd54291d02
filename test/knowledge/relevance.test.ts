/**
 * relevanceOf (src/domain/knowledge/relevance.ts), the evidence the "I don't know" threshold is applied to: the share
 * of the question's words a passage covers, blended with the semantic signal's cosine. The cosines are those the search
 * ranked with: every candidate's, or none when the search was lexical (some candidate not embedded yet, fusion.ts), so
 * one search's hits are all judged the same way (test/api/knowledge-fresh-index.test.ts).
 */
import { expect, it } from 'vitest'
import { relevanceOf } from '../../src/domain/knowledge/relevance.js'
import type { PassageHit } from '../../src/store/knowledge-store.js'

const hit = (id: string, content: string) => ({ id, title: 'Doc', content }) as unknown as PassageHit
const stats = { total: 10, df: new Map([['refund', 1], ['parcel', 2]]) }

it('under the sentence model: word coverage alone for a lexical search (no cosines), blended with each hit\'s cosine otherwise', () => {
  const hits = [hit('a', 'A refund for the parcel.'), hit('b', 'A refund for the parcel.'), hit('c', 'Nothing in common.')]
  const cosines = new Map([['a', 0.55], ['b', 0.1], ['c', 0.05]])
  const [close, far, unrelated] = relevanceOf(hits, ['refund', 'parcel'], stats, cosines, 'sentence')
  expect(close).toBeCloseTo(0.5 * 1 + 0.5 * ((0.55 - 0.1) / 0.9), 4)
  expect(far).toBe(0.5) // every word of the question, a cosine at the floor
  expect(unrelated).toBe(0)
  // Lexical (no cosine at all: coverage, as lexical search alone says) and an endpoint's model (max of the two) for comparison.
  expect(relevanceOf(hits, ['refund', 'parcel'], stats, undefined, 'sentence')).toEqual([1, 1, 0])
  expect(relevanceOf(hits, ['refund', 'parcel'], stats, cosines, 'endpoint')).toEqual([1, 1, 0.05])
})
