/**
 * Hybrid retrieval with an embeddings service (issue #17), end to end on this backend: files indexed through the
 * Files API get their passages embedded by the configured OpenAI-compatible endpoint, searches fuse the vector
 * ranking with the lexical one, and whatever the service does (down, 500, garbage, wrong lengths, nulls, endless
 * or no answer) indexing completes and searches answer 200 — lexically, exactly as without the service.
 *
 * The service is test/helpers/embedding-server.ts, a deterministic stand-in for a model that the tests can make
 * misbehave: a hashed bag of words over a tiny synonym table, where "quuxify the blarg" means "tighten the widget" —
 * words no passage contains, so only the vectors can find the passage. (The same path against a real model:
 * knowledge-embeddings-model.test.ts.)
 */
import { rmSync } from 'node:fs'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../../src/app.js'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import type { Config } from '../../src/config.js'
import { searchKnowledge } from '../../src/domain/knowledge/knowledge-service.js'
import type { EmbeddingsSettings } from '../../src/domain/knowledge/embeddings/knowledge-embeddings.js'
import type { App } from '../../src/http/types.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { startEmbeddingServer, type EmbeddingMode, type EmbeddingServer } from '../helpers/embedding-server.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { dropDatabase } from '../helpers/pg.js'
import { createFile, ownerHeaders } from './files-helpers.js'

const DOCS: Record<string, string> = {
  'bikes.txt': 'Assembly\n\nTighten the widget bolts with the torque wrench before the first ride. A loose widget rattles on rough roads.',
  'billing.txt': 'Billing\n\nEvery invoice is emailed on the first day of the month. Invoices list each seat and the taxes.',
  'returns.txt': 'Returns\n\nA refund is issued within five business days after the returned parcel arrives at the warehouse.',
  'shipping.txt': 'Shipping\n\nOrders ship from Rotterdam by courier; tracking numbers arrive by text message.',
}
const PARAPHRASE = 'how do I quuxify the blarg'

interface Passage { content: string; score: number; file: { id: string; key: string } }

/** An instance on the same data as `h` (SQLite file or PostgreSQL database), as a restart with `config` would start. */
interface Instance { app: App; store: KyselyStore; close(): Promise<void> }

describe('knowledge: hybrid retrieval with an embeddings service', () => {
  let server: EmbeddingServer
  beforeAll(async () => {
    server = await startEmbeddingServer({ dims: 256 })
  })
  afterAll(async () => server?.close())

  const settings = (model: string): EmbeddingsSettings => ({
    url: server.url, model, apiKey: undefined, batchSize: 4, timeoutMs: 1_000, queryTimeoutMs: 500, backoffMs: 50, maxBackoffMs: 200, pollMs: 100, minSimilarity: 0,
  })

  async function search(h: Harness, app: App, query: string, limit = 5): Promise<Passage[]> {
    const res = await app.inject({ method: 'GET', url: `/v1/files/search?query=${encodeURIComponent(query)}&limit=${limit}`, headers: ownerHeaders(h) })
    expect(res.statusCode, res.body).toBe(200)
    return (res.json() as { passages: Passage[] }).passages
  }

  /** The lexical ranking alone (searchKnowledge without a vector ranking), as the API's fields. */
  async function lexical(h: Harness, store: KyselyStore, query: string, limit = 5) {
    const hits = await searchKnowledge(store.knowledge, h.credentials.botId, { query, limit }, Date.now())
    return hits.map((p) => ({ fileId: p.fileId, content: p.content, score: p.score }))
  }
  const fields = (passages: Passage[]) => passages.map((p) => ({ fileId: p.file.id, content: p.content, score: p.score }))

  async function count(store: KyselyStore, query: ReturnType<typeof sql<{ n: number | string }>>): Promise<number> {
    const { rows } = await query.execute(store.db)
    return Number(rows[0]!.n)
  }
  const vectorsOf = (store: KyselyStore, model: string) => count(store, sql<{ n: number }>`SELECT count(*) AS n FROM kb_passage_vectors WHERE model = ${model} AND dims > 0`)
  const allVectors = (store: KyselyStore) => count(store, sql<{ n: number }>`SELECT count(*) AS n FROM kb_passage_vectors`)
  const visiblePassages = (store: KyselyStore) => count(store, sql<{ n: number }>`SELECT count(*) AS n FROM kb_passages p
    JOIN files f ON f.id = p.file_id AND f.blob_name = p.blob_name WHERE f.status = 'indexing_completed'`)
  /** Waits until every visible passage has a vector of `model` (the backfill caught up). */
  async function embedded(store: KyselyStore, model: string, refused = 0): Promise<void> {
    await vi.waitFor(async () => {
      const passages = await visiblePassages(store)
      expect(passages).toBeGreaterThan(0)
      expect(await vectorsOf(store, model)).toBe(passages - refused)
    }, { timeout: 15_000, interval: 50 })
  }

  async function upload(h: Harness, app: App = h.app): Promise<void> {
    for (const [key, text] of Object.entries(DOCS)) await createFile(h, `${Math.random().toString(36).slice(2, 8)}-${key}`, text, { index: true })
    await app.services.files.knowledge.idle()
  }

  /** Stops `h`'s app and adapters (not its data) and starts another instance on the same data with `config`. */
  async function restart(h: Harness, previous: Instance | undefined, config: Partial<Config>): Promise<Instance> {
    if (previous) await previous.close()
    else {
      await h.app.close()
      await closeAdapters({ store: h.store, pubsub: h.pubsub, blobs: h.blobs })
    }
    const adapters = await createAdapters({ ...h.config, ...config })
    const app = await buildApp({ config: { ...h.config, ...config }, ...adapters, logger: false })
    await app.ready()
    return { app, store: adapters.store, close: async () => { await app.close(); await closeAdapters(adapters) } }
  }
  /** Removes what a harness whose app was replaced by `restart` leaves behind. */
  async function dispose(h: Harness, instance: Instance): Promise<void> {
    await instance.close()
    if (h.databaseUrl) await dropDatabase(h.databaseUrl)
    rmSync(h.dataDir, { recursive: true, force: true })
  }

  it('embeds passages of files indexed through the Files API; a paraphrase lexical search misses is found through the vectors', async () => {
    const h = await startParley({ config: { embeddings: settings('model-a') } })
    try {
      await upload(h)
      await embedded(h.store, 'model-a')
      expect(server.embedded.get('model-a')).toBeGreaterThanOrEqual(Object.keys(DOCS).length)

      // Lexical search alone finds nothing for the paraphrase; hybrid search puts the right passage first.
      expect((await lexical(h, h.store, PARAPHRASE)).filter((p) => p.content.includes('widget'))).toEqual([])
      const found = await search(h, h.app, PARAPHRASE)
      expect(found[0]!.content).toContain('Tighten the widget bolts')
      expect(found[0]!.file.key).toMatch(/bikes\.txt$/)
      expect((await search(h, h.app, 'when is my zimzam sent'))[0]!.content).toContain('invoice is emailed')
      // A plain keyword query still finds its passage first (both rankings agree).
      expect((await search(h, h.app, 'refund warehouse'))[0]!.content).toContain('refund is issued')

      // Caller-given passages replace the file's vectors: the new text is embedded and found, the old one is gone.
      const bikes = found[0]!.file.id
      const set = await h.app.inject({
        method: 'PUT', url: `/v1/files/${bikes}/passages`, headers: ownerHeaders(h),
        payload: { passages: [{ content: 'File the zimzam florps with the accounting team.' }] },
      })
      expect(set.statusCode, set.body).toBeLessThan(300)
      await embedded(h.store, 'model-a')
      expect((await search(h, h.app, PARAPHRASE)).map((p) => p.content).filter((c) => c.includes('widget'))).toEqual([])
      expect((await search(h, h.app, 'reimbursement'))[0]!.file.id).toBe(bikes)
    } finally {
      await h.close()
    }
  })

  it('with the service down, indexing completes and search answers exactly as lexical search; vectors are backfilled when it is back', async () => {
    await server.stop()
    const h = await startParley({ config: { embeddings: settings('model-down') } })
    try {
      await upload(h)
      const files = (await h.app.inject({ method: 'GET', url: '/v1/files', headers: ownerHeaders(h) })).json() as { files: { status: string }[] }
      expect(files.files.map((f) => f.status)).toEqual(Object.keys(DOCS).map(() => 'indexing_completed'))
      for (const query of [PARAPHRASE, 'widget bolts', 'invoice month taxes', 'rotterdam']) {
        expect(fields(await search(h, h.app, query))).toEqual(await lexical(h, h.store, query))
      }
      expect(await allVectors(h.store)).toBe(0)

      await server.start()
      await embedded(h.store, 'model-down')
      expect((await search(h, h.app, PARAPHRASE))[0]!.content).toContain('Tighten the widget bolts')
    } finally {
      await server.start()
      await h.close()
    }
  })

  it('while the backfill is part-way, a search with a lexical candidate not embedded yet answers exactly as lexical search', async () => {
    const h = await startParley({ config: { embeddings: settings('model-partial') } })
    try {
      const knowledge = h.app.services.files.knowledge
      await upload(h)
      await embedded(h.store, 'model-partial')
      // A new file, indexed while the backfill is paused: it says indexing_completed, its passage has no vector yet.
      await knowledge.embeddings!.backfill.stop()
      await createFile(h, 'widget-care.txt', 'Widget care\n\nOil the widget hinge every month: a dry widget hinge squeaks.', { index: true })
      await knowledge.idle()
      const ranked = async (how = 'lexical_not_embedded') => Number(new RegExp(`^parley_kb_search_ranking_total\\{ranking="${how}"\\} (\\d+)$`, 'm').exec((await h.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? 0)
      const before = await ranked()
      // "widget": the new passage and the embedded bikes one are candidates; fused, only the bikes one would have
      // had the vector ranking's share.
      for (const query of ['widget', 'widget hinge bolts']) {
        const answer = fields(await search(h, h.app, query))
        expect(answer.map((p) => p.content).join(' ')).toContain('widget hinge')
        expect(answer).toEqual(await lexical(h, h.store, query))
      }
      expect(await ranked()).toBe(before + 2)
      // Once the new passage has its vector, the same searches are fused again.
      knowledge.embeddings!.backfill.start()
      await embedded(h.store, 'model-partial')
      const fused = await ranked('fused')
      expect((await search(h, h.app, PARAPHRASE)).map((p) => p.content).join(' ')).toContain('Tighten the widget bolts')
      expect(await ranked('fused')).toBe(fused + 1)
    } finally {
      await h.close()
    }
  })

  it('a model change ignores the old vectors at once, embeds every passage again (resuming after a restart) and drops the old ones', async () => {
    const h = await startParley({ config: { embeddings: settings('model-old') } })
    let instance: Instance | undefined
    try {
      await upload(h)
      await embedded(h.store, 'model-old')
      const passages = await visiblePassages(h.store)

      // Restart with another model while the service is down: the old vectors no longer count.
      await server.stop()
      instance = await restart(h, undefined, { embeddings: settings('model-new') })
      expect(await vectorsOf(instance.store, 'model-old')).toBe(passages)
      expect(fields(await search(h, instance.app, PARAPHRASE))).toEqual(await lexical(h, instance.store, PARAPHRASE))
      expect(await vectorsOf(instance.store, 'model-new')).toBe(0)

      // Another restart (the pending work is in the database, nowhere else), then the service is back.
      instance = await restart(h, instance, { embeddings: settings('model-new') })
      await server.start()
      await embedded(instance.store, 'model-new')
      expect(server.embedded.get('model-new')).toBeGreaterThanOrEqual(passages)
      expect((await search(h, instance.app, PARAPHRASE))[0]!.content).toContain('Tighten the widget bolts')
      // Once caught up, the old model's vectors are collected.
      await vi.waitFor(async () => expect(await vectorsOf(instance!.store, 'model-old')).toBe(0), { timeout: 10_000, interval: 50 })

      // Without the setting, nothing of this is used: search is lexical, exactly.
      instance = await restart(h, instance, { embeddings: undefined })
      expect(fields(await search(h, instance.app, PARAPHRASE))).toEqual(await lexical(h, instance.store, PARAPHRASE))
    } finally {
      await server.start()
      if (instance) await dispose(h, instance)
      else await h.close()
    }
  })

  it('hostile answers (500, garbage, wrong or mixed lengths, nulls, endless or no answer) never fail indexing or search', async () => {
    const h = await startParley({ config: { embeddings: settings('model-hostile') } })
    try {
      await upload(h)
      await embedded(h.store, 'model-hostile')
      const modes: EmbeddingMode[] = ['refuse', 'error500', 'garbage', 'wrongDims', 'mixedDims', 'nan', 'huge', 'slow']
      for (const mode of modes) {
        server.mode = mode
        // Past the backoff left by the previous mode's failure, so this one is really asked.
        await new Promise((r) => setTimeout(r, 250))
        const before = server.requests
        const query = `${PARAPHRASE} ${mode}`
        const passages = await search(h, h.app, query)
        expect(server.requests, mode).toBeGreaterThan(before)
        // The query's vector was unusable (or of a length no stored vector has): the answer is the lexical one, exactly.
        expect(fields(passages), mode).toEqual(await lexical(h, h.store, query))
      }
      for (const mode of modes) {
        server.mode = mode
        await createFile(h, `hostile-${mode}.txt`, `Notes written while the service answered ${mode}.`, { index: true })
        await h.app.services.files.knowledge.idle()
        expect((await search(h, h.app, `notes written ${mode}`)).length, mode).toBeGreaterThan(0)
      }
      server.mode = 'ok'
      const listed = (await h.app.inject({ method: 'GET', url: '/v1/files?pageSize=100', headers: ownerHeaders(h) })).json() as { files: { status: string }[] }
      expect(new Set(listed.files.map((f) => f.status))).toEqual(new Set(['indexing_completed']))

      // A passage the service refuses (400) is marked and left to lexical search; the others are embedded.
      server.rejectContaining = 'UNEMBEDDABLE'
      await createFile(h, 'refused.txt', 'This UNEMBEDDABLE paragraph is refused by the service.', { index: true })
      await h.app.services.files.knowledge.idle()
      await embedded(h.store, 'model-hostile', 1)
      expect((await search(h, h.app, 'unembeddable paragraph'))[0]!.content).toContain('UNEMBEDDABLE')
      expect((await search(h, h.app, PARAPHRASE))[0]!.content).toContain('Tighten the widget bolts')
    } finally {
      server.mode = 'ok'
      server.rejectContaining = undefined
      await h.close()
    }
  })
})
