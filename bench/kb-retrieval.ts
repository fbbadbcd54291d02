/**
 * Knowledge-base retrieval quality, per backend: the corpus of test/fixtures/kb (30 documents, several
 * formats including PDF) is uploaded with `index: true` through the Files API of a real Parley, then every
 * question of questions.json is asked with searchFiles(limit 3). The figure is the share of questions
 * whose expected passage is in the top 3. PostgreSQL runs on a throwaway cluster (Debian's postgresql
 * package); without it only SQLite is reported. Run: `npx tsx bench/kb-retrieval.ts`.
 */
import { findPostgresBinaries, startPgCluster } from '../test/helpers/pg-cluster.js'
import { evaluateRetrieval, type RetrievalReport } from '../test/knowledge/retrieval.js'
import { writeResultsSection } from './lib/results.js'
import { withBenchApp } from './lib/bench-app.js'

async function measure(kind: 'sqlite' | 'postgres', pgUrl?: string): Promise<RetrievalReport> {
  return withBenchApp(kind, pgUrl, (app, headers) => evaluateRetrieval(app, headers))
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
