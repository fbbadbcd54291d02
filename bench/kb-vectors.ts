/**
 * Hybrid retrieval cost (issue #17): knowledge search with passage vectors over 20,000 passages of one bot.
 * Passages are written through the knowledge store as the indexer writes them; their vectors (random, seeded,
 * 384 and 768 dimensions — the sizes of common small embedding models) through the vector store as the backfill
 * writes them. Search is searchKnowledge with a vector ranking whose query embedding comes from an in-process
 * provider (no HTTP: this measures Parley's part — the lexical search, the vector scoring in the database, the
 * fusion — not the embeddings service's). Reported: vector writes per second, p50/p99 of the vector ranking alone
 * and of the whole hybrid search, per engine: SQLite with sqlite-vec, SQLite's JS fallback, PostgreSQL's portable
 * path (real[] scored in SQL); all pre-select 400 candidates by sign-sketch Hamming distance, then score exactly.
 * Run: `npx tsx bench/kb-vectors.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { bootstrap } from '../src/domain/bootstrap.js'
import { KnowledgeEmbeddings } from '../src/domain/knowledge/embeddings/knowledge-embeddings.js'
import type { EmbeddingsProvider } from '../src/domain/knowledge/embeddings/provider.js'
import { searchKnowledge } from '../src/domain/knowledge/knowledge-service.js'
import { createPostgresStore } from '../src/store/postgres.js'
import { createSqliteStore } from '../src/store/sqlite.js'
import type { KyselyStore } from '../src/store/kysely/kysely-store.js'
import { createDatabase, findPostgresBinaries, startPgCluster } from '../test/helpers/pg-cluster.js'
import { writeResultsSection } from './lib/results.js'

const PASSAGES = 20_000
const FILES = 40
const QUERIES = 300
const WARMUP = 30
const MODEL = 'bench-model'
/** A vocabulary of 5,000 pseudo-words drawn with a Zipf-like law: a few frequent words, a long tail (as in prose). */
const WORDS = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x`)

let seed = 7
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const randomVector = (dims: number) => Float32Array.from({ length: dims }, () => random() - 0.5)
const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(WORDS.length ** random()) - 1]).join(' ')
/** Questions use content words: the 50 most frequent (the corpus's "stop words") are left out. */
const question = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(50 * 100 ** random()) - 1]).join(' ')

class LocalProvider implements EmbeddingsProvider {
  readonly model = MODEL
  constructor(private readonly dims: number) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map(() => randomVector(this.dims))
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

interface Row { engine: string; dims: number; writesPerSecond: number; vector: [number, number]; hybrid: [number, number]; lexical: [number, number] }

async function measure(engine: string, open: () => Promise<{ store: KyselyStore; close(): Promise<void> }>, dims: number): Promise<Row> {
  const { store, close } = await open()
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-vectors-'))
  try {
    const { credentials } = await bootstrap(store, dataDir, 'http://127.0.0.1:0')
    const botId = credentials!.botId
    const perFile = PASSAGES / FILES
    let writeMs = 0
    for (let f = 0; f < FILES; f++) {
      const now = Date.now()
      const { file } = await store.files.upsertFile({
        id: `bench-file-${f}`, botId, key: `doc-${f}.md`, contentType: 'text/markdown', uploadNonce: 'n', tags: {}, metadata: {},
        accessPolicies: [], index: true, expiresAt: null, ownerType: 'bot', ownerId: botId, now,
      })
      await store.files.completeUpload({ botId, id: file.id, uploadNonce: 'n', expectedBlobName: null, blobName: `blob-${f}`, size: 1, now })
      await store.knowledge.markIndexingPending(botId, file.id, `blob-${f}`, now)
      for (let i = 0; i < perFile; i += 100) {
        await store.knowledge.addPassages(botId, file.id, `blob-${f}`, Array.from({ length: 100 }, (_, j) => ({
          position: i + j, title: `doc-${f}.md › ${sentence(3)}`, content: sentence(90), meta: { subtype: 'paragraph' as const },
        })))
      }
      await store.knowledge.completeIndexing(botId, file.id, `blob-${f}`, null, now)
      if (f % 10 === 0) process.stderr.write(`  ${engine} ${dims}d: file ${f}/${FILES}\n`)
      const pendingFile = { botId, fileId: file.id, blobName: `blob-${f}` }
      for (;;) {
        const pending = await store.passageVectors.pendingPassages(pendingFile, MODEL, 64)
        if (pending.length === 0) break
        const vectors = pending.map((passage) => ({ passage, vector: randomVector(dims) }))
        const t = performance.now()
        await store.passageVectors.putVectors(MODEL, vectors)
        writeMs += performance.now() - t
      }
    }
    const embeddings = new KnowledgeEmbeddings(store.passageVectors, new LocalProvider(dims),
      { batchSize: 64, timeoutMs: 1000, queryTimeoutMs: 1000, backoffMs: 1000, maxBackoffMs: 1000, pollMs: 60_000, minSimilarity: 0 }, { warn: () => {}, info: () => {} })
    const time = async (fn: (q: string) => Promise<unknown>) => {
      const samples: number[] = []
      for (let i = 0; i < WARMUP + QUERIES; i++) {
        const q = `${question(6)} ${i}`
        const t = performance.now()
        await fn(q)
        if (i >= WARMUP) samples.push(performance.now() - t)
      }
      samples.sort((a, b) => a - b)
      return [quantile(samples, 0.5), quantile(samples, 0.99)] as [number, number]
    }
    const files = { all: undefined, any: undefined }
    process.stderr.write(`  ${engine} ${dims}d: searching\n`)
    const vector = await time((query) => embeddings.rank({ botId, query, files, now: Date.now(), limit: 50 }))
    const hybrid = await time((query) => searchKnowledge(store.knowledge, botId, { query, limit: 10 }, Date.now(), embeddings))
    const lexical = await time((query) => searchKnowledge(store.knowledge, botId, { query, limit: 10 }, Date.now()))
    const row: Row = { engine: `${engine} (${store.passageVectors.engine.name})`, dims, writesPerSecond: PASSAGES / (writeMs / 1000), vector, hybrid, lexical }
    process.stdout.write(`${row.engine} ${dims}d: writes ${row.writesPerSecond.toFixed(0)}/s, vector p50 ${vector[0].toFixed(1)} p99 ${vector[1].toFixed(1)} ms, hybrid p50 ${hybrid[0].toFixed(1)} p99 ${hybrid[1].toFixed(1)} ms, lexical p50 ${lexical[0].toFixed(1)} p99 ${lexical[1].toFixed(1)} ms\n`)
    return row
  } finally {
    await close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const sqlite = async (jsVectorScoring = false) => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-vectors-db-'))
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL', jsVectorScoring })
  return { store, close: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
}

const rows: Row[] = []
for (const dims of [384, 768]) rows.push(await measure('SQLite', () => sqlite(), dims))
rows.push(await measure('SQLite', () => sqlite(true), 384))
if (findPostgresBinaries()) {
  const cluster = await startPgCluster()
  try {
    for (const dims of [384, 768]) {
      rows.push(await measure('PostgreSQL', async () => {
        const store = await createPostgresStore({ url: await createDatabase(cluster.url), poolSize: 5 })
        return { store, close: () => store.close() }
      }, dims))
    }
  } finally {
    await cluster.stop()
  }
}

const ms = (x: number) => x.toFixed(1)
writeResultsSection('kb-vectors', `## Knowledge search with embeddings (\`npx tsx bench/kb-vectors.ts\`)

${PASSAGES.toLocaleString('en')} passages of one bot (${FILES} files), each with a vector of the model (random, seeded). Latency of
${QUERIES} searches (after ${WARMUP} warm-up ones), in ms: the vector ranking alone (the ${50} nearest passages, scored in the
database), the whole hybrid search (lexical top 50 + vector top 50, fused by RRF, top 10) and, for comparison, the
lexical search alone. The query embedding comes from an in-process provider: the embeddings service's own latency
(a local model: a few ms to tens of ms per query) comes on top. Vector writes: the backfill's compare-and-set inserts.
Target (issue #17): search p99 ≤ 50 ms over 20,000 passages on SQLite. Measured ${new Date().toISOString().slice(0, 10)}.

| Engine | Dimensions | Vector writes/s | Vector ranking p50 / p99 | Hybrid search p50 / p99 | Lexical only p50 / p99 |
|---|---|---|---|---|---|
${rows.map((r) => `| ${r.engine} | ${r.dims} | ${r.writesPerSecond.toFixed(0)} | ${ms(r.vector[0])} / ${ms(r.vector[1])} | **${ms(r.hybrid[0])} / ${ms(r.hybrid[1])}** | ${ms(r.lexical[0])} / ${ms(r.lexical[1])} |`).join('\n')}
`)
