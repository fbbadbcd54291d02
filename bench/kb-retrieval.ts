/**
 * Knowledge-base retrieval quality, per backend: the corpus of test/fixtures/kb (30 documents, several
 * formats including PDF) is uploaded with `index: true` through the Files API of a real Parley, then every
 * question of questions.json is asked with searchFiles(limit 3). The figure is the share of questions
 * whose expected passage is in the top 3. PostgreSQL runs on a throwaway cluster (Debian's postgresql
 * package); without it only SQLite is reported. Run: `npx tsx bench/kb-retrieval.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { LocalBlobStore } from '../src/blobs/local.js'
import { loadConfig } from '../src/config.js'
import { bootstrap } from '../src/domain/bootstrap.js'
import { MemoryPubSub } from '../src/pubsub/memory.js'
import { createPostgresStore } from '../src/store/postgres.js'
import { createSqliteStore } from '../src/store/sqlite.js'
import type { KyselyStore } from '../src/store/kysely/kysely-store.js'
import { createDatabase, findPostgresBinaries, startPgCluster } from '../test/helpers/pg-cluster.js'
import { evaluateRetrieval, type RetrievalReport } from '../test/knowledge/retrieval.js'
import { writeResultsSection } from './lib/results.js'

async function measure(kind: 'sqlite' | 'postgres', pgUrl?: string): Promise<RetrievalReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-kb-'))
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' })
  const store: KyselyStore = kind === 'sqlite'
    ? await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
    : await createPostgresStore({ url: await createDatabase(pgUrl!), poolSize: 5 })
  const pubsub = new MemoryPubSub()
  const app = await buildApp({ config, store, pubsub, blobs: new LocalBlobStore(join(dataDir, 'blobs')), logger: false })
  try {
    await app.ready()
    const { credentials } = await bootstrap(store, dataDir, config.publicUrl)
    return await evaluateRetrieval(app, { authorization: `Bearer ${credentials!.token}`, 'x-bot-id': credentials!.botId })
  } finally {
    await app.close()
    await pubsub.close()
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const rows: string[] = []
const reports: [string, RetrievalReport][] = [['SQLite (FTS5, bm25)', await measure('sqlite')]]
if (findPostgresBinaries()) {
  const cluster = await startPgCluster()
  try {
    reports.push(['PostgreSQL (tsvector, ts_rank)', await measure('postgres', cluster.url)])
  } finally {
    await cluster.stop()
  }
}
for (const [name, r] of reports) {
  rows.push(`| ${name} | ${r.documents} | ${r.questions} | ${r.answered} | **${(r.rate * 100).toFixed(1)} %** |`)
  process.stdout.write(`${name}: ${r.answered}/${r.questions} (${(r.rate * 100).toFixed(1)} %)\n`)
  for (const m of r.misses) process.stdout.write(`  miss: ${m.q} (want ${m.file}) got ${JSON.stringify(m.got)}\n`)
}
const misses = reports.flatMap(([name, r]) => r.misses.map((m) => `- ${name}: “${m.q}” (expected ${m.file})`))
writeResultsSection('kb-retrieval', `## Knowledge-base retrieval (\`npx tsx bench/kb-retrieval.ts\`)

Share of questions whose expected passage is among the top 3 results of searchFiles, on the corpus of
test/fixtures/kb (Markdown, text, HTML, JSON, CSV and PDF documents; questions phrased differently from
the text: synonyms, other word order, a typo). The test suite asserts at least 85 % on both backends
(test/api/knowledge-retrieval.test.ts). Measured ${new Date().toISOString().slice(0, 10)}.

| Backend | Documents | Questions | Right passage in top 3 | Rate |
|---|---|---|---|---|
${rows.join('\n')}

${misses.length ? `Missed questions:\n${misses.join('\n')}` : 'No missed question.'}
`)
