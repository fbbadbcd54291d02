/**
 * Retrieval evaluation on real public documents that nobody here wrote (test/fixtures/kb-real, see its
 * README.md for sources and licences): the Debian GNU/Linux FAQ (17 HTML chapters, and the PDF Debian
 * ships), Git's gitfaq(7) and SQLite's FAQ (HTML as shipped; PDF printed from that HTML with Chromium).
 * Every document is uploaded with `index: true` through the Files API, tagged format=html or format=pdf,
 * and each question of questions.json is asked once per format (search restricted by that tag).
 *
 * A question is answered at rank k when the k-th passage comes from the question's document and contains
 * its `expect` text, compared with every character but letters and digits removed (so line breaks,
 * hyphenation and quotes of the PDF do not matter). Reported: top-1, top-3 and MRR (over the first 10).
 *
 * THE SPLIT (fixed before any tuning, never to be changed): a question belongs to the HELD-OUT half when
 * the FNV-1a 32-bit hash of its `q` text (UTF-8 bytes) is odd, to the TUNING half otherwise. No tuning
 * decision may look at held-out questions or their results: tools print misses of the tuning half only.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { App } from '../../src/http/types.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/kb-real/', import.meta.url))

export type Doc = 'debian' | 'git' | 'sqlite'
export type Format = 'html' | 'pdf'
export interface RealQuestion { q: string; doc: Doc; expect: string }
export interface RealDoc { key: string; doc: Doc; format: Format; bytes: Buffer }

const PREFIX: Record<Doc, string> = { debian: 'debian-faq', git: 'gitfaq', sqlite: 'sqlite-faq' }

export function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0
  return h
}

export const isHeldOut = (q: RealQuestion): boolean => fnv1a(q.q) % 2 === 1

export function loadRealQuestions(): RealQuestion[] {
  return JSON.parse(readFileSync(join(FIXTURES, 'questions.json'), 'utf8')) as RealQuestion[]
}

export function loadRealCorpus(): RealDoc[] {
  const docs: RealDoc[] = []
  const docOf = (key: string): Doc => (key.startsWith('debian-faq') ? 'debian' : key.startsWith('gitfaq') ? 'git' : 'sqlite')
  for (const name of readdirSync(join(FIXTURES, 'html', 'debian-faq')).sort()) {
    docs.push({ key: `debian-faq/${name}`, doc: 'debian', format: 'html', bytes: readFileSync(join(FIXTURES, 'html', 'debian-faq', name)) })
  }
  for (const name of ['gitfaq.html', 'sqlite-faq.html']) docs.push({ key: name, doc: docOf(name), format: 'html', bytes: readFileSync(join(FIXTURES, 'html', name)) })
  for (const name of ['debian-faq.pdf', 'gitfaq.pdf', 'sqlite-faq.pdf']) docs.push({ key: name, doc: docOf(name), format: 'pdf', bytes: readFileSync(join(FIXTURES, 'pdf', name)) })
  return docs
}

export const normalize = (s: string): string => s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')

export interface Scores { questions: number; top1: number; top3: number; mrr: number }
export interface RealMiss { q: string; doc: Doc; expect: string; rank: number | undefined; got: string[] }
export interface RealReport {
  passages: Record<Format, number>
  /** split → format → scores */
  scores: Record<'tuning' | 'heldOut', Record<Format, Scores>>
  /** Misses (not in the top 3) of the TUNING half only. */
  tuningMisses: Record<Format, RealMiss[]>
  /** The same scores, per document: doc → split → format. */
  byDoc: Record<Doc, Record<'tuning' | 'heldOut', Record<Format, Scores>>>
}

/**
 * Uploads the corpus (`formats`: both by default) as the bot (`headers`: Bearer token + x-bot-id) and waits for indexing,
 * and for the passages' vectors unless `vectors` is false (then it returns as soon as every file says
 * indexing_completed); passages per format.
 */
export async function indexRealCorpus(app: App, headers: Record<string, string>, { vectors = true, formats = ['html', 'pdf'] }: { vectors?: boolean; formats?: Format[] } = {}): Promise<Record<Format, number>> {
  const docs = loadRealCorpus().filter((d) => formats.includes(d.format))
  const ids: string[] = []
  for (const doc of docs) {
    const res = await app.inject({ method: 'PUT', url: '/v1/files', headers, payload: { key: doc.key, size: doc.bytes.length, index: true, tags: { format: doc.format } } })
    if (res.statusCode !== 200) throw new Error(`upsertFile ${doc.key}: ${res.body}`)
    const { file } = res.json() as { file: { id: string; uploadUrl: string; contentType: string } }
    const url = new URL(file.uploadUrl)
    const up = await app.inject({ method: 'PUT', url: url.pathname + url.search, headers: { 'content-type': file.contentType }, payload: doc.bytes })
    if (up.statusCode !== 200) throw new Error(`upload ${doc.key}: ${up.body}`)
    ids.push(file.id)
  }
  if (vectors) await app.services.files.knowledge.vectorsIdle()
  else await app.services.files.knowledge.idle()
  const passages: Record<Format, number> = { html: 0, pdf: 0 }
  for (const [i, id] of ids.entries()) {
    const res = await app.inject({ method: 'GET', url: `/v1/files/${id}`, headers })
    const status = (res.json() as { file: { status: string; failedStatusReason?: string } }).file
    if (status.status !== 'indexing_completed') throw new Error(`${docs[i]!.key} was not indexed: ${status.status} ${status.failedStatusReason ?? ''}`)
    let next: string | undefined
    do {
      const page = await app.inject({ method: 'GET', url: `/v1/files/${id}/passages?limit=200${next ? `&nextToken=${encodeURIComponent(next)}` : ''}`, headers })
      const body = page.json() as { passages: unknown[]; meta: { nextToken?: string } }
      passages[docs[i]!.format] += body.passages.length
      next = body.meta?.nextToken
    } while (next)
  }
  return passages
}

/** Asks the questions (`halves`: which halves) in both formats of an indexed corpus. */
export async function askRealQuestions(app: App, botId: string, halves: ('tuning' | 'heldOut')[] = ['tuning', 'heldOut']): Promise<Omit<RealReport, 'passages'>> {
  const questions = loadRealQuestions().filter((q) => halves.includes(isHeldOut(q) ? 'heldOut' : 'tuning'))
  const empty = (): Scores => ({ questions: 0, top1: 0, top3: 0, mrr: 0 })
  const split = () => ({ tuning: { html: empty(), pdf: empty() }, heldOut: { html: empty(), pdf: empty() } })
  const scores = split()
  const byDoc = { debian: split(), git: split(), sqlite: split() }
  const tuningMisses: Record<Format, RealMiss[]> = { html: [], pdf: [] }
  for (const format of ['html', 'pdf'] as const) {
    for (const question of questions) {
      const hits = await app.services.files.knowledge.search(botId, { query: question.q, tags: { format }, limit: 10 })
      const want = normalize(question.expect)
      const index = hits.findIndex((h) => h.file.key.startsWith(PREFIX[question.doc]) && normalize(h.content).includes(want))
      const rank = index < 0 ? undefined : index + 1
      const held = isHeldOut(question)
      for (const s of [scores[held ? 'heldOut' : 'tuning'][format], byDoc[question.doc][held ? 'heldOut' : 'tuning'][format]]) {
        s.questions++
        if (rank === 1) s.top1++
        if (rank !== undefined && rank <= 3) s.top3++
        if (rank !== undefined) s.mrr += 1 / rank
      }
      if (!held && (rank === undefined || rank > 3)) {
        tuningMisses[format].push({ q: question.q, doc: question.doc, expect: question.expect, rank, got: hits.slice(0, 3).map((h) => `${h.file.key} ${h.title.slice(-50)} :: ${h.content.slice(0, 70).replace(/\s+/g, ' ')}`) })
      }
    }
  }
  for (const split of [scores, ...Object.values(byDoc)].flatMap((h) => Object.values(h))) for (const s of Object.values(split)) s.mrr = s.questions ? s.mrr / s.questions : 0
  return { scores, tuningMisses, byDoc }
}

/** Indexes the corpus and asks every question in both formats. */
export async function evaluateRealRetrieval(app: App, headers: Record<string, string>, botId: string): Promise<RealReport> {
  const passages = await indexRealCorpus(app, headers)
  return { passages, ...(await askRealQuestions(app, botId)) }
}
