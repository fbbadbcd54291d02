/**
 * The agent card on real documents (issue #29): every question of the real-documents evaluation (test/fixtures/kb-real,
 * test/knowledge/real-retrieval.ts: the Debian FAQ, gitfaq(7), the SQLite FAQ, as HTML and PDF) asked as a user's
 * message to a bot whose only card is `{ type: 'agent', knowledge: true }`, through the official chat client.
 * - **Context recall**: the share of questions whose answer-bearing passage (from the right document, holding the
 *   expected text) is among the passages of the model's prompt, as the model received it.
 * - **What a turn adds over the model's own time**: the turn's latency (the user's message sent → the bot's answer
 *   received) minus the model call's latency as the gateway recorded it.
 * No model can run here: the model is the tests' OpenAI-compatible stand-in (test/helpers/llm-stand-in.ts), in this
 * process, answering at once; its answer does not matter, its prompt does. Built-in retrieval (no embeddings service).
 * Reproduce: `npm run bench -- agent`.
 */
import { startParley } from '../test/helpers/harness.js'
import { recordedCalls, startLlmStandIn, type StandInRequest } from '../test/helpers/llm-stand-in.js'
import { indexRealCorpus, isHeldOut, loadRealQuestions, normalize, type Doc } from '../test/knowledge/real-retrieval.js'
import { createBot, Talk } from '../test/runtime/helpers.js'
import { gitRevision } from './lib/load.js'
import { runBenchScript } from './lib/results.js'

const PREFIX: Record<Doc, string> = { debian: 'debian-faq', git: 'gitfaq', sqlite: 'sqlite-faq' }
const CODE = `export const workflows = { ask: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'agent', instructions: 'Answer the user from the passages.', knowledge: true }] } } } }`

interface Recall { questions: number; recalled: number }
export interface AgentResult {
  date: string; revision: string; questions: number; passages: number
  recall: Record<'all' | 'tuning' | 'heldOut' | Doc, Recall>
  turnMs: { p50: number; p90: number }; modelMs: { p50: number }; addedMs: { p50: number; p90: number }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 10) / 10
}

/** The prompt's passages as `[n] (key) content` lines give them: the file key and the text. */
function promptPassages(request: StandInRequest): { key: string; text: string }[] {
  const system = String((request.body.messages as { role: string; content: string }[])[0]!.content)
  // A passage runs from its `[n] (key…) ` to the next one's, or to the end: its text may hold blank lines.
  return [...system.matchAll(/\[\d+\] \(([^),]+)[^)]*\) ([\s\S]*?)(?=\n\n\[\d+\] \(|$)/g)].map((m) => ({ key: m[1]!, text: normalize(m[2]!) }))
}

async function run(): Promise<AgentResult> {
  const standIn = await startLlmStandIn(() => ({ text: 'Here is what the passages say.' }))
  const h = await startParley({ listen: true, env: { PARLEY_LLM_URL: standIn.url, PARLEY_LLM_MODELS: 'bench-model' } })
  try {
    const bot = await createBot(h, CODE)
    // One copy of each document, as a bot would have it (the HTML; both formats in one bot would compete for the slots).
    process.stdout.write('indexing the real documents (HTML)…\n')
    const passages = await indexRealCorpus(h.app, { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': bot.id }, { formats: ['html'] })
    const talk = await Talk.open(bot)
    const empty = (): Recall => ({ questions: 0, recalled: 0 })
    const recall: AgentResult['recall'] = { all: empty(), tuning: empty(), heldOut: empty(), debian: empty(), git: empty(), sqlite: empty() }
    const turns: number[] = []
    const models: number[] = []
    const added: number[] = []
    const questions = loadRealQuestions()
    for (const [i, question] of questions.entries()) {
      const before = standIn.requests.length
      const t0 = performance.now()
      await talk.ask(question.q)
      const turn = performance.now() - t0
      const request = standIn.requests[before]
      if (!request) throw new Error(`no model call for "${question.q}"`)
      const want = normalize(question.expect)
      const hit = promptPassages(request).some((p) => p.key.startsWith(PREFIX[question.doc]) && p.text.includes(want))
      for (const r of [recall.all, recall[isHeldOut(question) ? 'heldOut' : 'tuning'], recall[question.doc]]) {
        r.questions++
        if (hit) r.recalled++
      }
      const model = (await recordedCalls(h, bot.id)).at(-1)!.latencyMs
      turns.push(turn)
      models.push(model)
      added.push(turn - model)
      if ((i + 1) % 50 === 0) process.stdout.write(`${i + 1}/${questions.length} questions\n`)
    }
    await talk.close()
    return {
      date: new Date().toISOString(), revision: gitRevision(), questions: questions.length, passages: passages.html, recall,
      turnMs: { p50: pct(turns, 50), p90: pct(turns, 90) }, modelMs: { p50: pct(models, 50) }, addedMs: { p50: pct(added, 50), p90: pct(added, 90) },
    }
  } finally {
    await h.close()
    await standIn.close()
  }
}

function markdown(r: AgentResult, command: string): string {
  const share = (x: Recall) => `${((100 * x.recalled) / x.questions).toFixed(1)} % (${x.recalled}/${x.questions})`
  return [
    '## The agent card on real documents: context recall, and what a turn adds over the model',
    '',
    `_Generated by \`${command}\` on ${r.date} at ${r.revision}. Overwritten by every run._`,
    '',
    `- **Context recall: ${share(r.recall.all)}** of the questions had their answer-bearing passage in the model's prompt`,
    `  (tuning half ${share(r.recall.tuning)}, **held-out half ${share(r.recall.heldOut)}**; Debian FAQ ${share(r.recall.debian)}, gitfaq ${share(r.recall.git)}, SQLite FAQ ${share(r.recall.sqlite)}).`,
    `- **A turn adds ${r.addedMs.p50} ms at p50** (p90 ${r.addedMs.p90} ms) over the model's own time (${r.modelMs.p50} ms at p50, the stand-in answering at once); the whole turn ${r.turnMs.p50} ms at p50, ${r.turnMs.p90} ms at p90.`,
    '',
    `${r.questions} questions of the real-documents evaluation (test/fixtures/kb-real, the HTML documents: ${r.passages}`,
    'passages), each sent by the official chat client to a bot whose only card is',
    '`{ type: \'agent\', knowledge: true }`, one after the other in one conversation. A question is recalled when one of',
    'the prompt\'s numbered passages comes from the right document and holds the expected answer text (normalized), the',
    'rule of `npx tsx bench/kb-real.ts`. The agent puts the 5 best passages in the prompt, without the relevance threshold',
    '(PARLEY_KB_MIN_SCORE; with it, recall was 76.4 %: the model judges relevance). The model is the tests\' stand-in',
    '(no model can run here), so the turn\'s time is Parley\'s: the search, the conversation\'s memory, the prompt, the',
    'gateway, the stream and the answer\'s message; the model\'s own time is its call\'s latency as the gateway recorded it.',
    'The machine is shared: read the latency as a ratio of the turn, not as an absolute figure.',
  ].join('\n')
}

runBenchScript({ moduleUrl: import.meta.url, section: 'agent', knobs: 'BENCH_AGENT_', run, markdown })
