/**
 * relevanceOf (src/domain/knowledge/relevance.ts), the evidence the "I don't know" threshold is applied to: the share
 * of the question's words a passage covers, blended with the semantic signal's cosine. A passage the sentence model
 * has not embedded yet (its vector is pending) is judged on its words alone, as without the model: it is not told
 * "no answer" for being new.
 */
import { expect, it } from 'vitest'
import { relevanceOf } from '../../src/domain/knowledge/relevance.js'
import type { PassageHit } from '../../src/store/knowledge-store.js'

const hit = (id: string, content: string) => ({ id, title: 'Doc', content }) as unknown as PassageHit
const stats = { total: 10, df: new Map([['refund', 1], ['parcel', 2]]) }

it('a pending passage (no cosine) keeps its word coverage under the sentence model; an embedded one is blended with its cosine', () => {
  const hits = [hit('a', 'A refund for the parcel.'), hit('b', 'A refund for the parcel.'), hit('c', 'Nothing in common.')]
  const cosines = new Map([['a', 0.55], ['c', 0.05]])
  const [embedded, pending, unrelated] = relevanceOf(hits, ['refund', 'parcel'], stats, cosines, 'sentence')
  expect(pending).toBe(1) // every word of the question: coverage 1, as lexical search alone would say
  expect(embedded).toBeCloseTo(0.5 * 1 + 0.5 * ((0.55 - 0.1) / 0.9), 4)
  expect(unrelated).toBe(0)
  // Lexical only (no cosine at all) and an endpoint's model (max of the two) for comparison.
  expect(relevanceOf(hits, ['refund', 'parcel'], stats, undefined, 'sentence')).toEqual([1, 1, 0])
  expect(relevanceOf(hits, ['refund', 'parcel'], stats, cosines, 'endpoint')).toEqual([1, 1, 0.05])
})
