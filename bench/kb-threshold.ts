/**
 * Calibration of the "I don't know" threshold (PARLEY_KB_MIN_SCORE, src/domain/knowledge/relevance.ts): on the
 * real-document corpus (test/knowledge/real-retrieval.ts), for thresholds from 0.05 to 0.7, the share of OFF-TOPIC
 * questions (test/fixtures/kb-real/off-topic.json, written for this: nothing in the corpus answers them) that get
 * no passage, and the share of answerable questions still answered in the top 3 after the threshold drops hits.
 * Decisions look at the TUNING half only (default); `--held-out` reports the held-out half, once, after choosing.
 * Run: `npx tsx bench/kb-threshold.ts [--held-out] [sqlite|postgres] ['[{"sentenceFloor": 0.2}, …]']` (the last argument:
 * settings of RELEVANCE to compare, each reported in turn; PARLEY_KB_SENTENCE_MODEL=off for the word vectors,
 * and PARLEY_KB_WORD_VECTORS=off too for lexical only).
 */
import { readFileSync } from 'node:fs'
import { findPostgresBinaries, startPgCluster } from '../test/helpers/pg-cluster.js'
import { indexRealCorpus, isHeldOut, loadRealQuestions, normalize } from '../test/knowledge/real-retrieval.js'
import { withBenchApp } from './lib/bench-app.js'
import { RELEVANCE } from '../src/domain/knowledge/relevance.js'

const args = process.argv.slice(2)
const half = args.includes('--held-out') ? 'heldOut' : 'tuning'
const kind = args.includes('postgres') ? 'postgres' as const : 'sqlite' as const
const offTopic = JSON.parse(readFileSync(new URL('../test/fixtures/kb-real/off-topic.json', import.meta.url), 'utf8')) as string[]
const PREFIX = { debian: 'debian-faq', git: 'gitfaq', sqlite: 'sqlite-faq' } as const
const THRESHOLDS = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7]
const env = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && (k === 'PARLEY_KB_WORD_VECTORS' || k === 'PARLEY_KB_SENTENCE_MODEL'))) as Record<string, string>
const grid = JSON.parse(args.find((a) => a.startsWith('[')) ?? '[{}]') as Partial<typeof RELEVANCE>[]
const base = { ...RELEVANCE }

const cluster = kind === 'postgres' && findPostgresBinaries() ? await startPgCluster() : undefined
try {
  await withBenchApp(kind, cluster?.url, async (app, headers, botId) => {
    await indexRealCorpus(app, headers)
    const questions = loadRealQuestions().filter((q) => (isHeldOut(q) ? 'heldOut' : 'tuning') === half)
    for (const setting of grid) for (const format of ['html', 'pdf'] as const) {
      Object.assign(RELEVANCE, base, setting)
      if (grid.length > 1) process.stdout.write(`RELEVANCE ${JSON.stringify(setting)}\n`)
      const answerable: { rel: number[]; rank: number | undefined }[] = []
      for (const q of questions) {
        const hits = await app.services.files.knowledge.search(botId, { query: q.q, tags: { format }, limit: 3 })
        const want = normalize(q.expect)
        const i = hits.findIndex((h) => h.file.key.startsWith(PREFIX[q.doc]) && normalize(h.content).includes(want))
        answerable.push({ rel: hits.map((h) => h.relevance), rank: i < 0 ? undefined : i })
      }
      const off: number[][] = []
      for (const q of offTopic) off.push((await app.services.files.knowledge.search(botId, { query: q, tags: { format }, limit: 3 })).map((h) => h.relevance))
      process.stdout.write(`${kind} ${format} ${half} (${questions.length} answerable, ${off.length} off-topic); answerable top-3 without threshold ${answerable.filter((a) => a.rank !== undefined).length}\n`)
      for (const t of THRESHOLDS) {
        const kept = answerable.filter((a) => a.rank !== undefined && a.rel[a.rank]! >= t).length
        const silenced = answerable.filter((a) => a.rel.every((r) => r < t)).length
        const noAnswer = off.filter((rels) => rels.every((r) => r < t)).length
        process.stdout.write(`  t=${t.toFixed(2)}  off-topic no-answer ${noAnswer}/${off.length}  answerable still top-3 ${kept}/${questions.length}  answerable told "don't know" ${silenced}\n`)
      }
    }
  }, env)
} finally {
  await cluster?.stop()
}
