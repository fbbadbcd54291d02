/**
 * Tuning aid for the built-in sentence model (src/domain/knowledge/embeddings/sentence-model.ts; issue #17): how
 * should its vectors join the lexical ranking? The corpus and questions are the evaluation's (test/fixtures/kb-real,
 * SQLite). Each question's 50 best passages of the lexical search (recall@50 is reported) are reranked: score / best +
 * w · cosine(question, passage) under the model, the passage being its heading path and text, its own heading, or its
 * text. The model is not used by the search itself here (PARLEY_KB_SENTENCE_MODEL=off; the word vectors on or off with
 * PARLEY_KB_WORD_VECTORS), so the base ranking is the one the cosines are added to.
 *
 *   npx tsx bench/kb-sentence-model.ts            # tuning half: every variant
 *   npx tsx bench/kb-sentence-model.ts --held-out # then the held-out half, for the variant the tuning half chose
 *
 * What it chose (2026-11-26, word vectors off): the text alone at w = 2 (README "How retrieval works").
 */
import { withBenchApp } from './lib/bench-app.js'
import { SentenceModelEmbeddings } from '../src/domain/knowledge/embeddings/sentence-model.js'
import { indexRealCorpus, isHeldOut, loadRealQuestions, normalize, type RealQuestion } from '../test/knowledge/real-retrieval.js'

const model = new SentenceModelEmbeddings()
const vectors = new Map<string, Float32Array>()
let embedMs = 0
let embedded = 0
async function embed(texts: string[]): Promise<Float32Array[]> {
  const missing = [...new Set(texts.filter((t) => !vectors.has(t)))]
  const start = performance.now()
  const computed = await model.embed(missing, { timeoutMs: 600_000 })
  embedMs += performance.now() - start
  embedded += missing.length
  missing.forEach((t, i) => vectors.set(t, computed[i] ?? new Float32Array(512)))
  return texts.map((t) => vectors.get(t)!)
}
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

interface Candidate { lexical: number; whole: Float32Array; heading: Float32Array; text: Float32Array; right: boolean }
type Variant = (c: Candidate, q: Float32Array) => number
const variants: Record<string, Variant> = { 'built-in search as is': (c) => c.lexical }
for (const w of [0.5, 1, 2]) {
  variants[`+ ${w} · cos(heading path and text)`] = (c, q) => c.lexical + w * dot(q, c.whole)
  variants[`+ ${w} · cos(own heading)`] = (c, q) => c.lexical + w * dot(q, c.heading)
  variants[`+ ${w} · cos(text)`] = (c, q) => c.lexical + w * dot(q, c.text)
  variants[`+ ${w} · max of the three`] = (c, q) => c.lexical + w * Math.max(dot(q, c.whole), dot(q, c.heading), dot(q, c.text))
}
const PREFIX: Record<RealQuestion['doc'], string> = { debian: 'debian-faq', git: 'gitfaq', sqlite: 'sqlite-faq' }

await withBenchApp('sqlite', undefined, async (app, headers, botId) => {
  await indexRealCorpus(app, headers)
  const score = async (half: 'tuning' | 'heldOut', names: string[]) => {
    const top3: Record<string, { html: number; pdf: number }> = Object.fromEntries(names.map((n) => [n, { html: 0, pdf: 0 }]))
    const recall = { html: 0, pdf: 0 }
    const questions = loadRealQuestions().filter((q) => isHeldOut(q) === (half === 'heldOut'))
    for (const format of ['html', 'pdf'] as const) {
      for (const question of questions) {
        const hits = await app.services.files.knowledge.search(botId, { query: question.q, tags: { format }, limit: 50 })
        const [q] = await embed([question.q])
        const whole = await embed(hits.map((h) => `${h.title}\n${h.content}`))
        const heading = await embed(hits.map((h) => h.title.split(' › ').at(-1)!))
        const text = await embed(hits.map((h) => h.content))
        const want = normalize(question.expect)
        const candidates: Candidate[] = hits.map((h, i) => ({
          lexical: h.score / (hits[0]!.score || 1), whole: whole[i]!, heading: heading[i]!, text: text[i]!,
          right: h.file.key.startsWith(PREFIX[question.doc]) && normalize(h.content).includes(want),
        }))
        if (candidates.some((c) => c.right)) recall[format]++
        for (const name of names) {
          const order = candidates.map((c, i) => ({ c, i, s: variants[name]!(c, q!) })).sort((a, b) => b.s - a.s || a.i - b.i)
          if (order.slice(0, 3).some((o) => o.c.right)) top3[name]![format]++
        }
      }
    }
    return { questions: questions.length, top3, recall }
  }
  const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)} %`
  const tuning = await score('tuning', Object.keys(variants))
  process.stdout.write(`Tuning half (${tuning.questions} questions per format), SQLite: recall@50 HTML ${pct(tuning.recall.html, tuning.questions)}, PDF ${pct(tuning.recall.pdf, tuning.questions)}\n`)
  process.stdout.write('| Rerank | HTML top-3 | PDF top-3 |\n|---|---|---|\n')
  for (const [name, s] of Object.entries(tuning.top3)) process.stdout.write(`| ${name} | ${pct(s.html, tuning.questions)} | ${pct(s.pdf, tuning.questions)} |\n`)
  const best = Object.entries(tuning.top3).sort((a, b) => b[1].html + b[1].pdf - (a[1].html + a[1].pdf))[0]![0]
  process.stdout.write(`Chosen on the tuning half: ${best}. Model: ${(embedMs / Math.max(1, embedded)).toFixed(1)} ms per text embedded (${embedded} texts).\n`)
  if (process.argv.includes('--held-out')) {
    const held = await score('heldOut', ['built-in search as is', best])
    for (const [name, s] of Object.entries(held.top3)) process.stdout.write(`Held-out (${held.questions}): ${name}: HTML ${pct(s.html, held.questions)}, PDF ${pct(s.pdf, held.questions)}\n`)
  }
}, { PARLEY_KB_SENTENCE_MODEL: 'off', ...(process.env.PARLEY_KB_WORD_VECTORS && { PARLEY_KB_WORD_VECTORS: process.env.PARLEY_KB_WORD_VECTORS }) })
await model.close()
