/**
 * Knowledge search latency on SQLite over 20,000 passages (target: p99 ≤ 50 ms), with the whole search path
 * (typo correction, WordNet expansion, two candidate queries, document frequencies, rerank), and indexing
 * throughput through the Files API. The corpus is made of sentences drawn (deterministically) from the
 * words of the real-document fixtures, each passage under its own heading; the questions are those of
 * test/fixtures/kb-real. Run: `npx tsx bench/kb-latency.ts`.
 *
 * With the built-in sentence model (the default), embedding all 20,000 passages would take ~15 minutes of one core:
 * the model embeds them in the background for EMBED_SECONDS (its throughput is reported), then the passages it did
 * not reach get deterministic pseudo-random unit vectors of its length, stored as its own would be. Search latency
 * does not depend on the vectors' values: each search still embeds its question with the real model and reads and
 * scores its candidates' stored vectors.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { LocalBlobStore } from '../src/blobs/local.js'
import { loadConfig } from '../src/config.js'
import { bootstrap } from '../src/domain/bootstrap.js'
import { words } from '../src/domain/knowledge/query.js'
import { MemoryPubSub } from '../src/pubsub/memory.js'
import { createSqliteStore } from '../src/store/sqlite.js'
import { loadRealQuestions } from '../test/knowledge/real-retrieval.js'
import { SENTENCE_MODEL } from '../src/domain/knowledge/embeddings/sentence-model.js'
import { writeResultsSection } from './lib/results.js'

const PASSAGES = 20_000
const FILES = 10
const here = new URL('../test/fixtures/kb-real/', import.meta.url)
const vocabulary = words(readFileSync(new URL('html/gitfaq.html', here), 'utf8').replace(/<[^>]+>/g, ' ') + readFileSync(new URL('html/sqlite-faq.html', here), 'utf8').replace(/<[^>]+>/g, ' '))
let seed = 42
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
const sentence = () => Array.from({ length: 8 + Math.floor(random() * 12) }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ') + '.'

const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-kblat-'))
const EMBED_SECONDS = 60
const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', PARLEY_KB_WORD_VECTORS: process.env.PARLEY_KB_WORD_VECTORS, PARLEY_KB_SENTENCE_MODEL: process.env.PARLEY_KB_SENTENCE_MODEL })
const store = await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
const pubsub = new MemoryPubSub()
const app = await buildApp({ config, store, pubsub, blobs: new LocalBlobStore(join(dataDir, 'blobs')), logger: false })
try {
  await app.ready()
  const { credentials } = await bootstrap(store, dataDir, config.publicUrl)
  const headers = { authorization: `Bearer ${credentials!.token}`, 'x-bot-id': credentials!.botId }
  const started = performance.now()
  let chars = 0
  for (let f = 0; f < FILES; f++) {
    const parts: string[] = []
    for (let i = 0; i < PASSAGES / FILES; i++) parts.push(`## Topic ${f}-${i}: ${sentence()}\n\n${Array.from({ length: 5 }, sentence).join(' ')}\n`)
    const body = Buffer.from(`# Generated ${f}\n\n${parts.join('\n')}`)
    chars += body.length
    const res = await app.inject({ method: 'PUT', url: '/v1/files', headers, payload: { key: `gen-${f}.md`, size: body.length, index: true } })
    const { file } = res.json() as { file: { uploadUrl: string; contentType: string } }
    const url = new URL(file.uploadUrl)
    const up = await app.inject({ method: 'PUT', url: url.pathname + url.search, headers: { 'content-type': file.contentType }, payload: body })
    if (up.statusCode !== 200) throw new Error(up.body)
  }
  // Indexing (extraction, passages, full-text index) ends when no file is pending any more.
  for (;;) {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM files WHERE status <> 'indexing_completed'`.execute(store.db)
    if (Number(rows[0]?.n ?? 0) === 0) break
    await new Promise((r) => setTimeout(r, 100))
  }
  const indexSeconds = (performance.now() - started) / 1000
  let embedding = ''
  if (config.kbSentenceModel) {
    const countVectors = async () => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM kb_passage_vectors WHERE model = ${SENTENCE_MODEL}`.execute(store.db)).rows[0]?.n ?? 0)
    const before = await countVectors()
    const t0 = performance.now()
    await new Promise((r) => setTimeout(r, EMBED_SECONDS * 1000))
    const embedded = (await countVectors()) - before
    const rate = embedded / ((performance.now() - t0) / 1000)
    embedding = `${rate.toFixed(1)} passages/s embedded by the sentence model (${embedded} in ${EMBED_SECONDS} s, beside nothing else)`
    process.stdout.write(`${embedding}\n`)
    let filled = 0
    for (;;) {
      const files = await store.passageVectors.filesPending(SENTENCE_MODEL, Date.now(), 100)
      if (files.length === 0) break
      for (const file of files) {
        const pending = await store.passageVectors.pendingPassages(file, SENTENCE_MODEL, 1000)
        filled += await store.passageVectors.putVectors(SENTENCE_MODEL, pending.map((passage) => ({ passage, vector: Float32Array.from({ length: 512 }, () => random() - 0.5) })))
      }
    }
    process.stdout.write(`${filled} passages given pseudo-random vectors\n`)
  }
  await app.services.files.knowledge.vectorsIdle()
  const { total } = await store.knowledge.termFrequencies(credentials!.botId, [])
  const questions = loadRealQuestions().map((q) => q.q)
  for (const q of questions.slice(0, 20)) await app.services.files.knowledge.search(credentials!.botId, { query: q, limit: 10 }) // warm-up
  if (process.env.KB_PROFILE) {
    const { queryTerms, expandTerms } = await import('../src/domain/knowledge/query.js')
    const { semanticExpansions } = await import('../src/domain/knowledge/rank.js')
    const k = store.knowledge
    const bot = credentials!.botId
    const acc: Record<string, number> = {}
    const time = async <T>(name: string, f: () => Promise<T> | T): Promise<T> => {
      const t = performance.now()
      const r = await f()
      acc[name] = (acc[name] ?? 0) + performance.now() - t
      return r
    }
    for (const q of questions) {
      const terms = queryTerms(q)
      const expanded = await time('typo', () => expandTerms(k, bot, terms))
      const sem = await time('wordnet', () => semanticExpansions(terms))
      await time('own', () => k.searchPassages({ botId: bot, terms: expanded, now: Date.now(), limit: 40 }))
      await time('wide', () => k.searchPassages({ botId: bot, terms: [...expanded, ...sem.map((e) => e.term)], now: Date.now(), limit: 40 }))
      await time('df', () => k.termFrequencies(bot, [...expanded, ...sem.map((e) => e.term)]))
    }
    for (const [name, ms] of Object.entries(acc)) process.stdout.write(`${name}: ${(ms / questions.length).toFixed(1)} ms/query\n`)
  }
  const times: number[] = []
  for (let round = 0; round < 2; round++) {
    for (const q of questions) {
      const t = performance.now()
      await app.services.files.knowledge.search(credentials!.botId, { query: q, limit: 10 })
      times.push(performance.now() - t)
    }
  }
  times.sort((a, b) => a - b)
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(1)
  const line = `| SQLite | ${total} | ${times.length} | ${pct(0.5)} ms | ${pct(0.95)} ms | **${pct(0.99)} ms** | ${(total / indexSeconds).toFixed(0)} passages/s (${(chars / 1e6 / indexSeconds).toFixed(2)} MB/s) |`
  process.stdout.write(`${line}\n`)
  const signal = config.kbSentenceModel
    ? `the built-in sentence model (the default): ${embedding}; the passages it had not reached then got pseudo-random vectors (see bench/kb-latency.ts), each search embedding its question with the model and scoring its candidates' stored vectors`
    : `built-in word vectors ${process.env.PARLEY_KB_WORD_VECTORS === 'off' ? 'off (lexical only)' : 'on'} (PARLEY_KB_SENTENCE_MODEL=off)`
  writeResultsSection('kb-latency', `## Knowledge search latency and indexing throughput (\`npx tsx bench/kb-latency.ts\`)

The whole search path of searchFiles (typo correction, WordNet expansion, document frequencies, the candidate query on
the question's rarest terms, rerank with the semantic signal, relevance) over ${total} passages of one bot on SQLite,
asking the ${questions.length} real-document questions twice (after a warm-up); indexing through the Files API (Markdown,
${FILES} files: extraction and full-text index). Semantic signal: ${signal}. Target: p99 ≤ 50 ms. The machine's 2 cores were shared with other jobs (load average ${loadavg().map((l) => l.toFixed(1)).join(' / ')}
at the end of the run): figures are noisy, p99 especially. Measured ${new Date().toISOString().slice(0, 10)}.

| Backend | Passages | Searches | p50 | p95 | p99 | Indexing |
|---|---|---|---|---|---|---|
${line}
`)
} finally {
  await app.close()
  await pubsub.close()
  await store.close()
  rmSync(dataDir, { recursive: true, force: true })
}
