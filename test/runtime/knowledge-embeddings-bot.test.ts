/**
 * A bot's knowledge card with hybrid retrieval (PARLEY_EMBEDDINGS_*): the runtime's knowledge search fuses the vector
 * ranking too, so a question in other words than the document's is answered from the right passage, and with a
 * minimum similarity a question the documents do not cover still gets the card's noAnswer. The embeddings service is
 * the deterministic stand-in of test/helpers/embedding-server.ts ("quuxify the blarg" means "tighten the widget").
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sql } from 'kysely'
import { startEmbeddingServer, type EmbeddingServer } from '../helpers/embedding-server.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, Talk, uid, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const workflows = {
  faq: {
    trigger: { type: 'message', pattern: '\\?$' },
    nodes: { answer: { cards: [{ type: 'knowledge', knowledgeBases: ['Manual'], noAnswer: 'NO ANSWER' }] } },
  },
}
`

describe('runtime: knowledge cards with an embeddings service', () => {
  let server: EmbeddingServer
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    server = await startEmbeddingServer({ dims: 256 })
    h = await startParley({
      listen: true,
      config: {
        ...STREAM_CONFIG,
        embeddings: { url: server.url, model: 'bot-model', apiKey: undefined, batchSize: 8, timeoutMs: 2_000, queryTimeoutMs: 1_000, backoffMs: 50, maxBackoffMs: 200, pollMs: 100, minSimilarity: 0.2 },
      },
    })
    bot = await createBot(h, CODE)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
    const { knowledgeBase } = await files.createKnowledgeBase({ name: 'Manual' })
    const docs: [string, string][] = [
      ['assembly.md', '# Assembly\n\nTighten the widget bolts with the torque wrench before the first ride.'],
      ['billing.md', '# Billing\n\nEvery invoice is emailed on the first day of the month.'],
    ]
    for (const [key, content] of docs) await files.uploadFile({ key, content, index: true, tags: { kbId: knowledgeBase.id } })
    await h.app.services.files.knowledge.idle()
    await vi.waitFor(async () => {
      const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM kb_passage_vectors WHERE model = 'bot-model'`.execute(h.store.db)
      expect(Number(rows[0]!.n)).toBe(docs.length)
    }, { timeout: 15_000, interval: 50 })
  })
  afterAll(async () => {
    await h?.close()
    await server?.close()
  })

  it('answers a question in other words from the right passage; an uncovered question gets noAnswer', async () => {
    const talk = await Talk.open(bot, { userId: uid('kb-vec') })
    try {
      const [answer] = await talk.askText('How do I quuxify the blarg?', 1)
      expect(answer).toContain('Tighten the widget bolts')
      expect(answer).toMatch(/Sources: assembly\.md/)
      // (a question neither the documents' words nor their WordNet neighbours reach: the built-in expansion answers
      // "Do you sell bicycles?" with the passage about a first ride — no relevance threshold yet, see the README)
      expect(await talk.askText('Is parking free on Sundays?', 1)).toEqual(['NO ANSWER'])
    } finally {
      await talk.close()
    }
  })
})
