/**
 * The built-in sentence model is one worker shared by every bot (src/domain/knowledge/embeddings/knowledge-embeddings.ts):
 * a bot has at most MAX_QUERIES_PER_BOT questions waiting for it, so a bot flooding searches cannot queue up the
 * worker in front of another bot's question (its extra searches are answered without the rerank). The model is a
 * gated stand-in here: what is tested is what reaches it, while nothing has come back yet.
 */
import { expect, it } from 'vitest'
import { KnowledgeEmbeddings, MAX_QUERIES_PER_BOT } from '../../src/domain/knowledge/embeddings/knowledge-embeddings.js'
import { SentenceModelEmbeddings } from '../../src/domain/knowledge/embeddings/sentence-model.js'
import type { PassageVectorStore } from '../../src/store/passage-vector-store.js'

class GatedModel extends SentenceModelEmbeddings {
  readonly asked: string[] = []
  open!: () => void
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve))
  override async embed(texts: string[]): Promise<Float32Array[]> {
    this.asked.push(...texts)
    await this.gate
    return texts.map(() => Float32Array.of(1, 0))
  }
}

it(`a bot has at most ${MAX_QUERIES_PER_BOT} questions waiting for the model; another bot's question still reaches it; a long question is cut`, async () => {
  const model = new GatedModel()
  const log = () => {}
  // Not started: no backfill runs, the store is never read.
  const embeddings = KnowledgeEmbeddings.sentenceModel({} as PassageVectorStore, { warn: log, info: log }, model)
  const prepare = embeddings.prepare!
  expect(MAX_QUERIES_PER_BOT).toBe(2)
  for (let i = 1; i <= 5; i++) prepare(`flood ${i}`, 'bot-a')
  prepare('flood 1', 'bot-a') // the same question again shares the one in flight
  prepare('a question of another bot', 'bot-b')
  expect(model.asked).toEqual(['flood 1', 'flood 2', 'a question of another bot'])
  model.open()
  await new Promise((r) => setTimeout(r, 10))
  prepare('flood 6', 'bot-a')
  prepare(`long ${'x'.repeat(5000)}`, 'bot-a')
  expect(model.asked.slice(3)).toEqual(['flood 6', `long ${'x'.repeat(495)}`])
})
