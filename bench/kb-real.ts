/**
 * Retrieval on real public documents (test/fixtures/kb-real: the Debian FAQ, gitfaq(7), the SQLite FAQ,
 * as HTML and PDF), per backend and per format: top-1, top-3 and MRR@10 for the tuning half and the
 * held-out half of the questions (split rule in test/knowledge/real-retrieval.ts). Built-in retrieval
 * only (no embeddings service). PostgreSQL runs on a throwaway cluster when its binaries are present.
 * Run: `npx tsx bench/kb-real.ts` (`--misses` prints the tuning half's misses, the held-out half's never;
 * `--tuning` reports the tuning half only and writes nothing: the mode used while tuning; `sqlite`/`postgres` one backend).
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
import { evaluateRealRetrieval, type RealReport } from '../test/knowledge/real-retrieval.js'
import { writeResultsSection } from './lib/results.js'

async function measure(kind: 'sqlite' | 'postgres', pgUrl?: string): Promise<RealReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-kbreal-'))
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' })
  const store: KyselyStore = kind === 'sqlite'
    ? await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
    : await createPostgresStore({ url: await createDatabase(pgUrl!), poolSize: 5 })
  const pubsub = new MemoryPubSub()
  const app = await buildApp({ config, store, pubsub, blobs: new LocalBlobStore(join(dataDir, 'blobs')), logger: false })
  try {
    await app.ready()
    const { credentials } = await bootstrap(store, dataDir, config.publicUrl)
    return await evaluateRealRetrieval(app, { authorization: `Bearer ${credentials!.token}`, 'x-bot-id': credentials!.botId }, credentials!.botId)
  } finally {
    await app.close()
    await pubsub.close()
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const args = process.argv.slice(2)
const only = args.find((a) => a === 'sqlite' || a === 'postgres')
const reports: [string, RealReport][] = []
if (only !== 'postgres') reports.push(['SQLite (FTS5)', await measure('sqlite')])
if (only !== 'sqlite' && findPostgresBinaries()) {
  const cluster = await startPgCluster()
  try {
    reports.push(['PostgreSQL (tsvector)', await measure('postgres', cluster.url)])
  } finally {
    await cluster.stop()
  }
}
const pct = (n: number, d: number) => `${((n / d) * 100).toFixed(1)} %`
const rows: string[] = []
for (const [name, r] of reports) {
  for (const split of args.includes('--tuning') ? ['tuning' as const] : ['tuning', 'heldOut'] as const) {
    for (const format of ['html', 'pdf'] as const) {
      const s = r.scores[split][format]
      const row = `| ${name} | ${format.toUpperCase()} | ${split === 'heldOut' ? '**held-out**' : 'tuning'} | ${s.questions} | ${pct(s.top1, s.questions)} | ${split === 'heldOut' ? `**${pct(s.top3, s.questions)}**` : pct(s.top3, s.questions)} | ${s.mrr.toFixed(3)} |`
      rows.push(row)
      process.stdout.write(`${row}\n`)
    }
  }
  if (args.includes('--misses')) {
    for (const format of ['html', 'pdf'] as const) {
      for (const m of r.tuningMisses[format]) process.stdout.write(`  ${name} ${format} miss (rank ${m.rank ?? '-'}): ${m.q} [${m.doc}: ${m.expect}]\n${m.got.map((g) => `      ${g}`).join('\n')}\n`)
    }
  }
}
if (!only && !args.includes('--no-write') && !args.includes('--tuning')) {
  const passages = reports[0]?.[1].passages
  writeResultsSection('kb-real', `## Knowledge-base retrieval on real documents (\`npx tsx bench/kb-real.ts\`)

Real public documents nobody here wrote (test/fixtures/kb-real: the Debian GNU/Linux FAQ as 17 HTML chapters and
the PDF Debian ships; Git's gitfaq(7) and SQLite's FAQ as shipped in HTML and as PDF printed from that HTML with
Chromium), ${passages ? `${passages.html} HTML and ${passages.pdf} PDF passages, ` : ''}asked 208 questions written as users ask them
(other words than the text, typos, long rambling questions). A question counts at rank k when the k-th passage of
searchFiles comes from the right document and contains the expected answer text. The held-out half (FNV-1a hash of
the question odd) was never looked at while tuning. Built-in retrieval only (no embeddings service).
Measured ${new Date().toISOString().slice(0, 10)}.

| Backend | Format | Half | Questions | Top-1 | Top-3 | MRR@10 |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`)
}
