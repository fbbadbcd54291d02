/**
 * The pure parts of hybrid retrieval: how an embeddings answer is checked (src/domain/knowledge/embeddings/provider.ts),
 * how rankings are fused (fusion.ts), and how PARLEY_EMBEDDINGS_* are read (src/config.ts).
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { FUSION_POOL, hybridRanking, reciprocalRankFusion, RRF_K } from '../../src/domain/knowledge/embeddings/fusion.js'
import { EmbeddingsError, MAX_DIMENSIONS, parseEmbeddings } from '../../src/domain/knowledge/embeddings/provider.js'
import type { PassageHit } from '../../src/store/knowledge-store.js'
import type { FileRow } from '../../src/store/file-store.js'

const file = { id: 'f', key: 'doc.md' } as FileRow
const hit = (id: string, score = 1): PassageHit => ({ id, fileId: 'f', position: Number(id.replace(/\D/g, '') || 0), title: 't', content: id, meta: {}, score, file })

describe('embeddings answers are checked before they are believed', () => {
  const ok = (data: unknown[]) => JSON.stringify({ data, model: 'm' })

  it('accepts a well-formed answer, in the order of `index`', () => {
    const vectors = parseEmbeddings(ok([{ index: 1, embedding: [0, 2] }, { index: 0, embedding: [1, 0] }]), 2)
    expect(vectors.map((v) => Array.from(v))).toEqual([[1, 0], [0, 2]])
  })

  it.each([
    ['not JSON', '{"data": ['],
    ['no data', JSON.stringify({ object: 'list' })],
    ['null body', 'null'],
    ['too few vectors', ok([{ index: 0, embedding: [1] }])],
    ['a duplicate index', ok([{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }])],
    ['an index out of range', ok([{ index: 0, embedding: [1] }, { index: 5, embedding: [1] }])],
    ['mixed lengths', ok([{ index: 0, embedding: [1, 2] }, { index: 1, embedding: [1] }])],
    ['a null component', ok([{ index: 0, embedding: [1, null] }, { index: 1, embedding: [1, 1] }])],
    ['a string component', ok([{ index: 0, embedding: [1, '2'] }, { index: 1, embedding: [1, 1] }])],
    ['a zero vector', ok([{ index: 0, embedding: [0, 0] }, { index: 1, embedding: [1, 1] }])],
    ['a component beyond float32', ok([{ index: 0, embedding: [1e39, 1] }, { index: 1, embedding: [1, 1] }])],
    ['an empty vector', ok([{ index: 0, embedding: [] }, { index: 1, embedding: [] }])],
    ['too many dimensions', ok([{ index: 0, embedding: new Array(MAX_DIMENSIONS + 1).fill(1) }, { index: 1, embedding: [1] }])],
  ])('refuses %s', (_, text) => {
    expect(() => parseEmbeddings(text, 2)).toThrow(EmbeddingsError)
  })
})

describe('reciprocal rank fusion', () => {
  it('sums 1/(k + rank) over the rankings, best first, with the fused score', () => {
    const fused = reciprocalRankFusion([[hit('a1'), hit('b2'), hit('c3')], [hit('c3'), hit('d4')]], 10)
    expect(fused.map((h) => h.id)).toEqual(['c3', 'a1', 'b2', 'd4'])
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 3) + 1 / (RRF_K + 1), 10)
    expect(fused[1]!.score).toBeCloseTo(1 / (RRF_K + 1), 10)
    expect(reciprocalRankFusion([[hit('a1'), hit('b2')]], 1).map((h) => h.id)).toEqual(['a1'])
  })

  it('a tie goes to the lexical (first) ranking', () => {
    expect(reciprocalRankFusion([[hit('lex1')], [hit('vec2')]], 10).map((h) => h.id)).toEqual(['lex1', 'vec2'])
  })

  it('without a vector ranking (none, or empty) the lexical answer is returned as is, asked for `limit` only', async () => {
    const asked: number[] = []
    const lexical = async (n: number) => {
      asked.push(n)
      return [hit('a1', 7.5), hit('b2', 3.25)]
    }
    const query = { botId: 'b', query: 'q', files: {}, now: 0, limit: 3 }
    expect(await hybridRanking(undefined, query, lexical)).toEqual({ hits: [hit('a1', 7.5), hit('b2', 3.25)], cosines: undefined, ranking: undefined })
    expect(await hybridRanking({ rank: async () => [] }, query, lexical)).toEqual({ hits: [hit('a1', 7.5), hit('b2', 3.25)], cosines: undefined, ranking: 'lexical_no_vectors' })
    expect(asked).toEqual([3, 3])
    const fused = await hybridRanking({ rank: async (q) => (q.limit === FUSION_POOL ? [hit('b2')] : []) }, query, lexical)
    expect(fused.hits.map((h) => h.id)).toEqual(['b2', 'a1'])
    expect(fused.ranking).toBe('fused')
    expect(asked).toEqual([3, 3, FUSION_POOL])
  })
})

describe('the rerank (built-in signals) ranks consistently', () => {
  const query = { botId: 'b', query: 'q', files: {}, now: 0, limit: 3 }
  const lexical = async () => [hit('a1', 4), hit('b2', 3), hit('c3', 2), hit('d4', 1)]
  const rerank = (cosines: [string, number][] | undefined) => ({ mode: 'rerank' as const, rerankWeight: 2, rank: async () => [], similarity: async () => cosines && new Map(cosines) })

  it('reranks when every candidate has its cosine, and says so', async () => {
    const ranked = await hybridRanking(rerank([['a1', 0], ['b2', 0], ['c3', 0], ['d4', 0.9]]), query, lexical)
    expect(ranked.hits.map((h) => h.id)).toEqual(['d4', 'a1', 'b2'])
    expect(ranked.ranking).toBe('reranked')
    expect(ranked.cosines?.size).toBe(4)
  })

  it('answers lexically, scores included and without cosines, when some candidate is not embedded yet or the query has no vector', async () => {
    const partly = await hybridRanking(rerank([['d4', 0.9], ['c3', 0.5]]), query, lexical)
    expect(partly).toEqual({ hits: [hit('a1', 4), hit('b2', 3), hit('c3', 2)], cosines: undefined, ranking: 'lexical_not_embedded' })
    expect((await hybridRanking(rerank(undefined), query, lexical)).ranking).toBe('lexical_no_query_vector')
  })
})

describe('PARLEY_EMBEDDINGS_* settings', () => {
  it('are off by default and read with their defaults when the URL is set', () => {
    expect(loadConfig({}).embeddings).toBeUndefined()
    expect(loadConfig({ PARLEY_EMBEDDINGS_URL: 'http://127.0.0.1:11434/', PARLEY_EMBEDDINGS_MODEL: 'nomic-embed-text' }).embeddings).toEqual({
      url: 'http://127.0.0.1:11434', model: 'nomic-embed-text', apiKey: undefined, batchSize: 32, timeoutMs: 30_000, queryTimeoutMs: 2_000,
      backoffMs: 1_000, maxBackoffMs: 60_000, pollMs: 30_000, minSimilarity: 0,
    })
    expect(loadConfig({ PARLEY_EMBEDDINGS_URL: 'http://h', PARLEY_EMBEDDINGS_MODEL: 'm', PARLEY_EMBEDDINGS_MIN_SIMILARITY: '0.45' }).embeddings?.minSimilarity).toBe(0.45)
  })

  it('refuse a bad URL, a missing model and a bad batch size at start', () => {
    expect(() => loadConfig({ PARLEY_EMBEDDINGS_URL: 'not a url', PARLEY_EMBEDDINGS_MODEL: 'm' })).toThrow(/PARLEY_EMBEDDINGS_URL/)
    expect(() => loadConfig({ PARLEY_EMBEDDINGS_URL: 'ftp://host', PARLEY_EMBEDDINGS_MODEL: 'm' })).toThrow(/http/)
    expect(() => loadConfig({ PARLEY_EMBEDDINGS_URL: 'http://host' })).toThrow(/PARLEY_EMBEDDINGS_MODEL/)
    expect(() => loadConfig({ PARLEY_EMBEDDINGS_URL: 'http://host', PARLEY_EMBEDDINGS_MODEL: 'm', PARLEY_EMBEDDINGS_BATCH_SIZE: '0' })).toThrow(/BATCH_SIZE/)
    expect(() => loadConfig({ PARLEY_EMBEDDINGS_URL: 'http://host', PARLEY_EMBEDDINGS_MODEL: 'm', PARLEY_EMBEDDINGS_BATCH_SIZE: '5000' })).toThrow(/BATCH_SIZE/)
    expect(() => loadConfig({ PARLEY_EMBEDDINGS_URL: 'http://host', PARLEY_EMBEDDINGS_MODEL: 'm', PARLEY_EMBEDDINGS_MIN_SIMILARITY: '2' })).toThrow(/MIN_SIMILARITY/)
  })
})
