/**
 * The built-in sentence model (issue #17; PARLEY_KB_SENTENCE_MODEL, on by default, off in the harness elsewhere) end to
 * end on this backend: files indexed through the Files API get their passages embedded in the background by the
 * real model (a worker thread) and stored under its name; a search meanwhile answers (lexically); afterwards the
 * lexical candidates are reranked with the stored vectors, which lifts a passage that says the question in other
 * words; a bot's search (searchForBot: the sandbox's searchKnowledge, knowledge cards) answers a paraphrase and
 * says noAnswer to an off-topic question.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { SENTENCE_MODEL } from '../../src/domain/knowledge/embeddings/sentence-model.js'
import { KB_MIN_SCORE_DEFAULT } from '../../src/domain/knowledge/relevance.js'
import { searchKnowledge } from '../../src/domain/knowledge/knowledge-service.js'
import { searchForBot } from '../../src/runtime/knowledge.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { createFile, ownerHeaders } from './files-helpers.js'

const DOCS: Record<string, string> = {
  'origins.txt': 'Origins\n\nThe name of the project comes from the first names of its founder and of his wife. The name was chosen in 1993.',
  'pronunciation.txt': 'Pronunciation\n\nThe name is pronounced with the stress on the first syllable, the e as in bed, and the ending rhymes with in.',
  'naming.txt': 'Release names\n\nEvery release has a code name: the name of a character from a film, used before the release gets its number.',
  'apt.txt': 'Command line\n\nThe apt program installs software from the command line: apt install followed by the package name.',
  'returns.txt': 'Returns\n\nA refund is issued within five business days after the returned parcel arrives at the warehouse.',
  'shipping.txt': 'Shipping\n\nOrders ship from Rotterdam by courier; tracking numbers arrive by text message.',
}
const SAY = 'how do you actually say the name out loud'

async function indexed(on: boolean): Promise<Harness> {
  const h = await startParley({ config: { kbSentenceModel: on } })
  for (const [key, text] of Object.entries(DOCS)) await createFile(h, key, text, { index: true })
  return h
}
const top3 = async (h: Harness, query: string) => (await h.app.services.files.knowledge.search(h.credentials.botId, { query, limit: 3 })).map((x) => x.file.key)

describe('knowledge: the built-in sentence model', () => {
  it('embeds passages in the background, stores them under its name, and reranks with them; search answers meanwhile', async () => {
    const h = await indexed(true)
    try {
      const knowledge = h.app.services.files.knowledge
      expect(knowledge.semanticRanking?.kind).toBe('sentence')
      // Before the vectors are stored the search answers lexically (nothing waits for the model).
      expect((await top3(h, SAY)).length).toBeGreaterThan(0)
      await knowledge.vectorsIdle()
      const stored = await sql<{ n: number | string }>`SELECT count(*) AS n FROM kb_passage_vectors WHERE model = ${SENTENCE_MODEL} AND dims = 512`.execute(h.store.db)
      const passages = await sql<{ n: number | string }>`SELECT count(*) AS n FROM kb_passages`.execute(h.store.db)
      expect(Number(passages.rows[0]!.n)).toBeGreaterThanOrEqual(Object.keys(DOCS).length)
      expect(Number(stored.rows[0]!.n)).toBe(Number(passages.rows[0]!.n))
      // Its work shows in /metrics: the texts it embedded (the passages and the question asked), its worker up.
      const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body
      expect(Number(/^parley_kb_sentence_model_texts (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(Number(passages.rows[0]!.n))
      expect(metrics).toMatch(/^parley_kb_sentence_model_up 1$/m)

      // "say … out loud" shares only "name" with the pronunciation passage (the others have it more often): the model
      // puts it in the top 3, above the passage about where the name comes from. Without it, it is not there (below).
      const ranked = await top3(h, SAY)
      expect(ranked).toContain('pronunciation.txt')
      expect(ranked.indexOf('pronunciation.txt')).toBeLessThan(ranked.includes('origins.txt') ? ranked.indexOf('origins.txt') : 3)

      const botId = h.credentials.botId
      const ask = (query: string) => searchForBot(h.store, botId, { query }, Date.now(), knowledge.semanticRanking, KB_MIN_SCORE_DEFAULT)
      const refund = await ask('when do I get my money back after I send the parcel back')
      expect(refund.noAnswer).toBe(false)
      expect(refund.results[0]!.content).toContain('refund is issued')
      expect(await ask('what text should I write in a birthday card for my mother')).toMatchObject({ noAnswer: true, results: [] })
    } finally {
      await h.close()
    }
  })

  it('ranks consistently while the backfill is part-way: a search whose candidates are not all embedded is the lexical one, relevance included', async () => {
    const h = await startParley({ config: { kbSentenceModel: true } })
    try {
      const knowledge = h.app.services.files.knowledge
      const botId = h.credentials.botId
      const backfill = knowledge.embeddings!.backfill
      const rankings = async () => Object.fromEntries([...(await h.app.inject({ method: 'GET', url: '/metrics' })).body
        .matchAll(/^parley_kb_search_ranking_total\{ranking="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]))
      // The passage the model prefers for SAY is embedded first; the backfill is then paused (as if it had not reached
      // the files added next), so the index holds one embedded candidate among unembedded ones.
      await createFile(h, 'pronunciation.txt', DOCS['pronunciation.txt']!, { index: true })
      await knowledge.vectorsIdle()
      // The question's embedding is computed (and kept) while everything is embedded: the partial search below has it.
      for (let i = 0; i < 5 && !(await rankings()).reranked; i++) await top3(h, SAY)
      expect((await rankings()).reranked).toBeGreaterThan(0)
      await backfill.stop()
      for (const [key, text] of Object.entries(DOCS)) if (key !== 'pronunciation.txt') await createFile(h, key, text, { index: true })
      await knowledge.idle()
      const files = (await h.app.inject({ method: 'GET', url: '/v1/files', headers: ownerHeaders(h) })).json() as { files: { status: string }[] }
      expect(files.files.map((f) => f.status)).toEqual(Object.keys(DOCS).map(() => 'indexing_completed'))

      // What searchFiles and a bot's search answer now is what lexical search answers: order, scores and relevance
      // (the "I don't know" threshold compares it); before, the one embedded passage got the cosine bonus alone.
      const lexical = await searchKnowledge(h.store.knowledge, botId, { query: SAY, limit: 3 }, Date.now(), undefined)
      const before = await rankings()
      expect(await knowledge.search(botId, { query: SAY, limit: 3 })).toEqual(lexical)
      const res = await h.app.inject({ method: 'GET', url: `/v1/files/search?query=${encodeURIComponent(SAY)}&limit=3`, headers: ownerHeaders(h) })
      expect((res.json() as { passages: { content: string; score: number }[] }).passages.map((p) => [p.content, p.score])).toEqual(lexical.map((p) => [p.content, p.score]))
      const bot = (semantic: typeof knowledge.semanticRanking) => searchForBot(h.store, botId, { query: SAY }, Date.now(), semantic, KB_MIN_SCORE_DEFAULT)
      expect(await bot(knowledge.semanticRanking)).toEqual(await bot(undefined))
      // …and /metrics says why: three searches with a semantic signal, lexical for want of vectors.
      expect((await rankings()).lexical_not_embedded).toBe((before.lexical_not_embedded ?? 0) + 3)
      expect(lexical.map((x) => x.file.key)).not.toContain('pronunciation.txt')

      // Once the backfill has embedded the rest, the candidates are reranked again.
      backfill.start()
      await knowledge.vectorsIdle()
      expect(await top3(h, SAY)).toContain('pronunciation.txt')
      expect((await rankings()).reranked).toBeGreaterThan(before.reranked!)
    } finally {
      await h.close()
    }
  })

  it('the same files without it: the pronunciation passage is not in the top 3', async () => {
    const h = await indexed(false)
    try {
      await h.app.services.files.knowledge.vectorsIdle()
      expect(await top3(h, SAY)).not.toContain('pronunciation.txt')
    } finally {
      await h.close()
    }
  })
})
