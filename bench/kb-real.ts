/**
 * Retrieval on real public documents (test/fixtures/kb-real: the Debian FAQ, gitfaq(7), the SQLite FAQ,
 * as HTML and PDF), per backend and per format: top-1, top-3 and MRR@10 for the tuning half and the
 * held-out half of the questions (split rule in test/knowledge/real-retrieval.ts). Built-in retrieval
 * (the default signal; PARLEY_KB_SENTENCE_MODEL / PARLEY_KB_WORD_VECTORS=off for the others), or an embeddings
 * endpoint's (PARLEY_EMBEDDINGS_URL and _MODEL set). PostgreSQL runs on a throwaway cluster when its binaries are present.
 * Run: `npx tsx bench/kb-real.ts` (`--misses` prints the tuning half's misses, the held-out half's never;
 * `--tuning` reports the tuning half only and writes nothing: the mode used while tuning; `sqlite`/`postgres` one backend).
 */
import { evaluateRealRetrieval, type RealReport } from '../test/knowledge/real-retrieval.js'
import { writeResultsSection } from './lib/results.js'
import { onSqliteThenPostgres, withBenchApp } from './lib/bench-app.js'

async function measure(kind: 'sqlite' | 'postgres', pgUrl?: string): Promise<RealReport> {
  // PARLEY_KB_WORD_VECTORS=off measures lexical retrieval alone (what the default install did before the built-in vectors).
  // PARLEY_EMBEDDINGS_* measure the hybrid path against an embeddings endpoint.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && (k === 'PARLEY_KB_WORD_VECTORS' || k === 'PARLEY_KB_SENTENCE_MODEL' || k.startsWith('PARLEY_EMBEDDINGS_')))) as Record<string, string>
  return withBenchApp(kind, pgUrl, (app, headers, botId) => evaluateRealRetrieval(app, headers, botId), env)
}

const args = process.argv.slice(2)
const only = args.find((a) => a === 'sqlite' || a === 'postgres')
const reports = await onSqliteThenPostgres(measure, { sqlite: 'SQLite (FTS5)', postgres: 'PostgreSQL (tsvector)' }, only)
const env = (name: string) => (process.env[name] ?? 'on') !== 'off'
const signal = process.env.PARLEY_EMBEDDINGS_URL ? `the endpoint's model \`${process.env.PARLEY_EMBEDDINGS_MODEL}\` (PARLEY_EMBEDDINGS_URL)`
  : env('PARLEY_KB_SENTENCE_MODEL') ? 'the built-in sentence model (PARLEY_KB_SENTENCE_MODEL, the default)'
  : env('PARLEY_KB_WORD_VECTORS') ? 'the built-in word vectors (PARLEY_KB_SENTENCE_MODEL=off)' : 'nothing (PARLEY_KB_SENTENCE_MODEL=off PARLEY_KB_WORD_VECTORS=off: lexical only)'
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
the question odd) was never looked at while tuning. Built-in retrieval only (no embeddings service): lexical ranking
with WordNet expansion, reranked with ${signal}. Retrieval quality only: the machine's load does not change these figures.
Measured ${new Date().toISOString().slice(0, 10)}.

| Backend | Format | Half | Questions | Top-1 | Top-3 | MRR@10 |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`)
}
