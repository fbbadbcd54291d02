/**
 * The retrieval-quality corpus (test/fixtures/kb: 30 documents in Markdown, text, HTML, JSON, CSV and PDF,
 * and questions phrased differently from the text) and its evaluation through the real Files API:
 * every document is uploaded with `index: true`, then each question is asked with searchFiles(limit 3);
 * it counts as answered when a top-3 passage comes from the expected file and contains the expected
 * words. Shared by test/api/knowledge-retrieval.test.ts and bench/kb-retrieval.ts (no vitest here).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { App } from '../../src/http/types.js'
import { makePdf } from './pdf.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/kb/', import.meta.url))

export interface CorpusDoc { key: string; bytes: Buffer }
export interface Question { q: string; file: string; expect: string }

/** The documents; `*.pdf.txt` sources become real PDFs (pages separated by `---` lines, first line the title). */
export function loadCorpus(): CorpusDoc[] {
  const dir = join(FIXTURES, 'docs')
  return readdirSync(dir).sort().map((name) => {
    const text = readFileSync(join(dir, name), 'utf8')
    if (!name.endsWith('.pdf.txt')) return { key: name, bytes: Buffer.from(text, 'utf8') }
    const [title, ...rest] = text.trimEnd().split('\n')
    const pages = rest.join('\n').split(/^---$/m).map((p) => p.trim().split('\n'))
    return { key: name.replace(/\.txt$/, ''), bytes: makePdf(pages, title) }
  })
}

export function loadQuestions(): Question[] {
  return JSON.parse(readFileSync(join(FIXTURES, 'questions.json'), 'utf8')) as Question[]
}

export interface RetrievalReport {
  documents: number
  questions: number
  answered: number
  /** answered / questions */
  rate: number
  misses: { q: string; file: string; got: string[] }[]
}

/** Uploads the corpus as the bot (`headers`: Bearer token + x-bot-id), waits for indexing, asks every question. */
export async function evaluateRetrieval(app: App, headers: Record<string, string>): Promise<RetrievalReport> {
  const docs = loadCorpus()
  const questions = loadQuestions()
  const ids = new Map<string, string>()
  for (const doc of docs) {
    const res = await app.inject({ method: 'PUT', url: '/v1/files', headers, payload: { key: doc.key, size: doc.bytes.length, index: true } })
    if (res.statusCode !== 200) throw new Error(`upsertFile ${doc.key}: ${res.body}`)
    const { file } = res.json() as { file: { id: string; uploadUrl: string; contentType: string } }
    const url = new URL(file.uploadUrl)
    const up = await app.inject({ method: 'PUT', url: url.pathname + url.search, headers: { 'content-type': file.contentType }, payload: doc.bytes })
    if (up.statusCode !== 200) throw new Error(`upload ${doc.key}: ${up.body}`)
    ids.set(doc.key, file.id)
  }
  await app.services.files.knowledge.idle()
  for (const [key, id] of ids) {
    const res = await app.inject({ method: 'GET', url: `/v1/files/${id}`, headers })
    const status = (res.json() as { file: { status: string; failedStatusReason?: string } }).file
    if (status.status !== 'indexing_completed') throw new Error(`${key} was not indexed: ${status.status} ${status.failedStatusReason ?? ''}`)
  }
  const misses: RetrievalReport['misses'] = []
  for (const question of questions) {
    const res = await app.inject({ method: 'GET', url: `/v1/files/search?limit=3&query=${encodeURIComponent(question.q)}`, headers })
    if (res.statusCode !== 200) throw new Error(`searchFiles: ${res.body}`)
    const { passages } = res.json() as { passages: { content: string; file: { key: string } }[] }
    const ok = passages.some((p) => p.file.key === question.file && p.content.toLowerCase().includes(question.expect.toLowerCase()))
    if (!ok) misses.push({ q: question.q, file: question.file, got: passages.map((p) => `${p.file.key}: ${p.content.slice(0, 60)}`) })
  }
  const answered = questions.length - misses.length
  return { documents: docs.length, questions: questions.length, answered, rate: answered / questions.length, misses }
}
