/**
 * Retrieval quality on this backend: the 30-document corpus of test/fixtures/kb, uploaded and indexed
 * through the Files API, must put the right passage in the top 3 for at least 85% of the questions
 * (synonyms, other word order, a typo). bench/kb-retrieval.ts reports the same figure in RESULTS.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { ownerHeaders } from './files-helpers.js'
import { evaluateRetrieval, loadCorpus, loadQuestions } from '../knowledge/retrieval.js'

describe('knowledge: retrieval quality', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  it('the corpus is large and varied enough to mean something', () => {
    const docs = loadCorpus()
    expect(docs.length).toBeGreaterThanOrEqual(30)
    expect(new Set(docs.map((d) => d.key.split('.').pop())).size).toBeGreaterThanOrEqual(6)
    expect(docs.filter((d) => d.bytes.subarray(0, 5).toString() === '%PDF-').length).toBeGreaterThanOrEqual(1)
    const questions = loadQuestions()
    expect(questions.length).toBeGreaterThanOrEqual(40)
    for (const q of questions) expect(docs.map((d) => d.key)).toContain(q.file)
  })

  it('puts the right passage in the top 3 for at least 85% of the questions', async () => {
    const report = await evaluateRetrieval(h.app, ownerHeaders(h))
    expect(report.rate, JSON.stringify(report.misses, null, 2)).toBeGreaterThanOrEqual(0.85)
  })
})
