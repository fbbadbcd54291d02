/**
 * The embeddings backfill (src/domain/knowledge/embeddings/backfill.ts) shares its model between bots: a bot whose
 * large knowledge base is being embedded does not hold back another bot's new file until it is done. Real SQLite
 * store; the provider is a slow stand-in that records which bot each passage belonged to (what is measured is the
 * order the backfill asks for, not the vectors).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { EmbeddingBackfill, takeInTurn } from '../../src/domain/knowledge/embeddings/backfill.js'
import { ServiceHealth } from '../../src/domain/knowledge/embeddings/health.js'
import type { EmbeddingsProvider } from '../../src/domain/knowledge/embeddings/provider.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { passage } from '../contract/knowledge.contract.js'
import { indexedFileIn } from '../contract/passage-vectors.contract.js'
import { seed } from '../contract/store.contract.js'

let dir: string
let store: KyselyStore
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-backfill-'))
  store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
})
afterAll(async () => {
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

it('a small file of another bot is embedded long before a large file that was pending first is done', async () => {
  const big = (await seed(store)).bot.id
  const small = (await seed(store)).bot.id
  await indexedFileIn(store, big, Array.from({ length: 400 }, (_, i) => passage(i, `big ${i}`)))
  await indexedFileIn(store, small, Array.from({ length: 5 }, (_, i) => passage(i, `small ${i}`)))
  const order: string[] = []
  const provider: EmbeddingsProvider = {
    model: 'fairness-test',
    async embed(texts) {
      await new Promise((r) => setTimeout(r, 2))
      for (const t of texts) order.push(t.includes('small') ? 'small' : 'big')
      return texts.map(() => Float32Array.of(1, 0, 0))
    },
  }
  const log = () => {}
  const backfill = new EmbeddingBackfill({
    vectors: store.passageVectors, provider, batchSize: 16, timeoutMs: 10_000, pollMs: 50, clock: Date.now, warn: log, info: log,
    health: new ServiceHealth({ backoffMs: 10, maxBackoffMs: 100, clock: Date.now, warn: log, info: log }),
  })
  backfill.start()
  try {
    await backfill.idle()
  } finally {
    await backfill.stop()
  }
  expect(order.filter((o) => o === 'big')).toHaveLength(400)
  expect(order.filter((o) => o === 'small')).toHaveLength(5)
  // The small file's last passage comes within the first pass over both files, not after the 400 of the large one.
  expect(order.lastIndexOf('small')).toBeLessThan(100)
})

it('takeInTurn: one file of each bot in turn, each bot\'s files in order, up to the limit', () => {
  const files = [...Array.from({ length: 30 }, (_, i) => ({ botId: 'a', fileId: `a${i}` })), { botId: 'b', fileId: 'b0' }, { botId: 'c', fileId: 'c0' }, { botId: 'c', fileId: 'c1' }]
  expect(takeInTurn(files, 5).map((f) => f.fileId)).toEqual(['a0', 'b0', 'c0', 'a1', 'c1'])
  expect(takeInTurn(files, 100)).toHaveLength(files.length)
  expect(takeInTurn([], 3)).toEqual([])
})
