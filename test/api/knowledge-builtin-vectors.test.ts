/**
 * The built-in semantic signal and the relevance threshold (issue #17), end to end on this backend: with the
 * built-in word vectors on (PARLEY_KB_WORD_VECTORS=on; off by default and in the harness elsewhere),
 * files indexed through the Files API are searched with the built-in model's vectors (computed in-process for the
 * lexical candidates, never stored), and a bot's knowledge search (searchForBot, what the
 * sandbox's searchKnowledge and knowledge cards call) says noAnswer for an off-topic question while a paraphrased
 * answerable one still gets its passage.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { BUILTIN_MODEL } from '../../src/domain/knowledge/embeddings/word-vectors.js'
import { KB_MIN_SCORE_DEFAULT } from '../../src/domain/knowledge/relevance.js'
import { searchForBot } from '../../src/runtime/knowledge.js'
import { startParley } from '../helpers/harness.js'
import { createFile } from './files-helpers.js'

const DOCS: Record<string, string> = {
  'bikes.txt': 'Assembly\n\nTighten the handlebar bolts with the torque wrench before the first ride. A loose stem rattles on rough roads.',
  'billing.txt': 'Billing\n\nEvery invoice is emailed on the first day of the month. Invoices list each seat and the taxes.',
  'returns.txt': 'Returns\n\nA refund is issued within five business days after the returned parcel arrives at the warehouse.',
  'shipping.txt': 'Shipping\n\nOrders ship from Rotterdam by courier; tracking numbers arrive by text message.',
}

describe('knowledge: built-in word vectors and the relevance threshold', () => {
  it('embeds passages with the built-in model, searches with them, and answers noAnswer to an off-topic question', async () => {
    const h = await startParley({ config: { kbWordVectors: true } })
    try {
      for (const [key, text] of Object.entries(DOCS)) await createFile(h, key, text, { index: true })
      await h.app.services.files.knowledge.vectorsIdle()
      // The built-in model reranks in-process from the passages' text: nothing is embedded in the background or stored.
      const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM kb_passage_vectors WHERE model = ${BUILTIN_MODEL}`.execute(h.store.db)
      const passages = await sql<{ n: number | string }>`SELECT count(*) AS n FROM kb_passages`.execute(h.store.db)
      expect(Number(passages.rows[0]!.n)).toBeGreaterThan(0)
      expect(Number(rows[0]!.n)).toBe(0)

      const botId = h.credentials.botId
      const semantic = h.app.services.files.knowledge.semanticRanking
      expect(semantic).toBeDefined()
      const ask = (query: string) => searchForBot(h.store, botId, { query }, Date.now(), semantic, KB_MIN_SCORE_DEFAULT)
      const hybrid = (query: string) => h.app.services.files.knowledge.search(botId, { query, limit: 3 })

      // A paraphrase sharing one word with its passage: found first, above the threshold.
      const paid = await hybrid('when do I get my money back after I send the parcel back')
      expect(paid[0]!.content).toContain('refund is issued')
      expect(paid[0]!.relevance).toBeGreaterThanOrEqual(KB_MIN_SCORE_DEFAULT)
      const answered = await ask('when do I get my money back after I send the parcel back')
      expect(answered.noAnswer).toBe(false)
      expect(answered.results[0]!.content).toContain('refund is issued')
      expect(answered.minScore).toBe(KB_MIN_SCORE_DEFAULT)

      // Off-topic: the search still ranks something, but nothing is relevant enough for the bot.
      expect((await hybrid('what text should I write in a birthday card for my mother')).length).toBeGreaterThan(0)
      const off = await ask('what text should I write in a birthday card for my mother')
      expect(off).toMatchObject({ noAnswer: true, results: [] })
      // The threshold is the caller's to change: 0 gives passages back.
      expect((await searchForBot(h.store, botId, { query: 'what text should I write in a birthday card for my mother', minScore: 0 }, Date.now(), semantic, KB_MIN_SCORE_DEFAULT)).noAnswer).toBe(false)
      await expect(searchForBot(h.store, botId, { query: 'x', minScore: 2 }, Date.now())).rejects.toThrow(/minScore/)
    } finally {
      await h.close()
    }
  })
})
