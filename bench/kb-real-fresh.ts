/**
 * Retrieval right after indexing (issue #24, item 10): the real-document evaluation of bench/kb-real.ts asked at
 * several moments of the built-in sentence model's background embedding. The backfill is paused before the upload;
 * the questions are asked once every file says `indexing_completed` (no passage embedded yet), then after the backfill
 * has embedded about a quarter, a half and three quarters of the passages (in its own order: a few batches of each
 * file in turn, then paused), then once it is done. Each moment also counts how the searches were ranked
 * (parley_kb_search_ranking_total: reranked with the vectors, or lexical because some candidate had none yet).
 * PostgreSQL runs on a throwaway cluster when its binaries are present.
 *
 *   npx tsx bench/kb-real-fresh.ts [sqlite|postgres]   # both backends (and RESULTS.md written) when none is named
 *
 * The sentence model embeds ~15 passages/s on one core: a backend takes ~2 minutes.
 */
import { sql } from 'kysely'
import { SENTENCE_MODEL } from '../src/domain/knowledge/embeddings/sentence-model.js'
import { askRealQuestions, indexRealCorpus, type RealReport } from '../test/knowledge/real-retrieval.js'
import { onSqliteThenPostgres, withBenchApp } from './lib/bench-app.js'
import { writeResultsSection } from './lib/results.js'

const SHARES = [0, 0.25, 0.5, 0.75, 1]

interface Moment { share: number; embedded: number; total: number; report: Omit<RealReport, 'passages'>; ranking: Record<string, number> }

/** The search-ranking counters of /metrics (empty before they existed). */
async function rankingCounts(app: Parameters<Parameters<typeof withBenchApp>[2]>[0]): Promise<Record<string, number>> {
  const body = (await app.inject({ method: 'GET', url: '/metrics' })).body
  return Object.fromEntries([...body.matchAll(/^parley_kb_search_ranking_total\{ranking="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]))
}

async function measure(kind: 'sqlite' | 'postgres', pgUrl?: string): Promise<Moment[]> {
  return withBenchApp(kind, pgUrl, async (app, headers, botId, { store }) => {
    const knowledge = app.services.files.knowledge
    const backfill = knowledge.embeddings?.backfill
    if (knowledge.embeddings?.kind !== 'sentence' || !backfill) throw new Error('the built-in sentence model is not on')
    await backfill.stop()
    const passages = await indexRealCorpus(app, headers, { vectors: false })
    const total = passages.html + passages.pdf
    const embedded = async () => Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM kb_passage_vectors WHERE model = ${SENTENCE_MODEL} AND dims > 0`.execute(store.db)).rows[0]!.n)
    const moments: Moment[] = []
    for (const share of SHARES) {
      if (share === 1) {
        backfill.start()
        await knowledge.vectorsIdle()
      } else if (share > 0) {
        backfill.start()
        while ((await embedded()) < share * total) await new Promise((r) => setTimeout(r, 100))
        await backfill.stop()
      }
      const before = await rankingCounts(app)
      const report = await askRealQuestions(app, botId)
      const after = await rankingCounts(app)
      const ranking = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0))
      const moment = { share, embedded: await embedded(), total, report, ranking }
      moments.push(moment)
      process.stdout.write(`${kind} ${moment.embedded}/${total} embedded: debian held-out HTML top-3 ${report.byDoc.debian.heldOut.html.top3}/${report.byDoc.debian.heldOut.html.questions}; ${JSON.stringify(ranking)}\n`)
    }
    return moments
  }, { PARLEY_KB_SENTENCE_MODEL: 'on' })
}

const only = process.argv.slice(2).find((a) => a === 'sqlite' || a === 'postgres')
const runs = await onSqliteThenPostgres(measure, { sqlite: 'SQLite', postgres: 'PostgreSQL' }, only)

const pct = (n: number, d: number) => `${((n / d) * 100).toFixed(1)} %`
const rows: string[] = []
for (const [name, moments] of runs) {
  for (const m of moments) {
    const s = m.report.scores
    const deb = m.report.byDoc.debian.heldOut.html
    const when = m.share === 0 ? 'right after `indexing_completed`' : m.share === 1 ? 'backfill done' : 'backfill paused part-way'
    const ranking = Object.entries(m.ranking).map(([k, v]) => `${k} ${v}`).join(', ') || '—'
    const row = `| ${name} | ${when} | ${m.embedded}/${m.total} | **${deb.top3}/${deb.questions}** | ${pct(s.heldOut.html.top3, s.heldOut.html.questions)} | ${pct(s.heldOut.pdf.top3, s.heldOut.pdf.questions)} | ${pct(s.tuning.html.top3, s.tuning.html.questions)} | ${pct(s.tuning.pdf.top3, s.tuning.pdf.questions)} | ${ranking} |`
    rows.push(row)
    process.stdout.write(`${row}\n`)
  }
}
if (!only) {
  writeResultsSection('kb-real-fresh', `## Knowledge retrieval right after indexing (\`npx tsx bench/kb-real-fresh.ts\`)

The real-document evaluation above (same corpus, questions, halves and rules), with the built-in sentence model (the
default), asked at five moments of its background embedding: right after every file says \`indexing_completed\` (the
backfill paused before the upload: no passage embedded), with the backfill paused after about a quarter, a half and
three quarters of the passages (in its own order), and when it is done. Top-3 per half and format; the first figure is
the Debian FAQ's held-out HTML questions. "Ranking": how the searches of that moment were ranked
(\`parley_kb_search_ranking_total\`): \`reranked\` with the stored vectors, \`lexical_not_embedded\` because a candidate had
no vector yet. Lexical search alone scores what the first row does (section "lexical only" above). Measured
${new Date().toISOString().slice(0, 10)}.

Before the rule "rerank only when every candidate has its vector" (issue #24 item 10; same command, SQLite, 2026-11-27),
the partial moments were worse than lexical search: 191/737 embedded, Debian held-out HTML 50/78, held-out HTML/PDF
65.4 / 69.2 %, tuning 68.3 / 76.9 %; 393/737: 61/78, 78.8 / **44.2 %**, 81.7 / 57.7 %; 576/737: 61/78, 78.8 / **53.8 %**,
80.8 / 55.8 % (the PDF, embedded last and only in part, lost up to a third of its answers: its embedded passages got the cosine bonus, the others not); 0/737 and 737/737
as below.

| Backend | Moment | Passages embedded | Debian held-out HTML top-3 | Held-out HTML | Held-out PDF | Tuning HTML | Tuning PDF | Ranking (searches) |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`)
}
