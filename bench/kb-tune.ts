/**
 * Tuning aid for the ranking weights (src/domain/knowledge/rank.ts RANKING): indexes the real-document
 * corpus once on SQLite (or PostgreSQL: second argument `postgres`), then scores weight settings on the TUNING half only (the held-out half is never
 * asked here). Run: `npx tsx bench/kb-tune.ts '[{}, {"heading": 1}]' [postgres]`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { LocalBlobStore } from '../src/blobs/local.js'
import { loadConfig } from '../src/config.js'
import { bootstrap } from '../src/domain/bootstrap.js'
import { RANKING } from '../src/domain/knowledge/rank.js'
import { FUSION } from '../src/domain/knowledge/embeddings/fusion.js'
import { MemoryPubSub } from '../src/pubsub/memory.js'
import { createPostgresStore } from '../src/store/postgres.js'
import { createSqliteStore } from '../src/store/sqlite.js'
import { createDatabase, startPgCluster } from '../test/helpers/pg-cluster.js'
import { askRealQuestions, indexRealCorpus } from '../test/knowledge/real-retrieval.js'

const dataDir = mkdtempSync(join(tmpdir(), 'parley-kb-tune-'))
const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', PARLEY_KB_WORD_VECTORS: process.env.PARLEY_KB_WORD_VECTORS, PARLEY_KB_SENTENCE_MODEL: process.env.PARLEY_KB_SENTENCE_MODEL })
const cluster = process.argv[3] === 'postgres' ? await startPgCluster() : undefined
const store = cluster ? await createPostgresStore({ url: await createDatabase(cluster.url), poolSize: 5 }) : await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
const pubsub = new MemoryPubSub()
const app = await buildApp({ config, store, pubsub, blobs: new LocalBlobStore(join(dataDir, 'blobs')), logger: false })
try {
  await app.ready()
  const { credentials } = await bootstrap(store, dataDir, config.publicUrl)
  await indexRealCorpus(app, { authorization: `Bearer ${credentials!.token}`, 'x-bot-id': credentials!.botId })
  await app.services.files.knowledge.vectorsIdle()
  const base = { ...RANKING }
  const fusionBase = { ...FUSION }
  // A setting `builtinWeight` goes to FUSION (embeddings/fusion.ts), the others to RANKING.
  const grid: (Partial<typeof RANKING> & Partial<typeof FUSION>)[] = JSON.parse(process.argv[2] ?? '[{}]')
  for (const change of grid) {
    const { builtinWeight, builtinMode, rerankWeight, rerankPool, headingWeight, sentenceRerankWeight, ...ranking } = change
    Object.assign(RANKING, base, ranking)
    Object.assign(FUSION, fusionBase, Object.fromEntries(Object.entries({ builtinWeight, builtinMode, rerankWeight, rerankPool, headingWeight, sentenceRerankWeight }).filter(([, v]) => v !== undefined)))
    const { scores } = await askRealQuestions(app, credentials!.botId, ['tuning'])
    const { html, pdf } = scores.tuning
    process.stdout.write(`${JSON.stringify(change)}  html top3 ${html.top3}/${html.questions} mrr ${html.mrr.toFixed(3)}  pdf top3 ${pdf.top3}/${pdf.questions} mrr ${pdf.mrr.toFixed(3)}  sum ${html.top3 + pdf.top3}\n`)
  }
} finally {
  await app.close()
  await pubsub.close()
  await store.close()
  await cluster?.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
