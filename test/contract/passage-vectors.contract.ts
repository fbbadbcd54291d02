/**
 * Contract of PassageVectorStore (src/store/passage-vector-store.ts), run against each engine: sqlite-vec (or its JS
 * fallback) on SQLite and the portable real[] scoring on PostgreSQL must agree on what is pending, what is stored
 * (compare-and-set on the passage text), what the nearest passages are and what stays hidden (other bots, other
 * models and lengths, replaced or expired content, tag filters). Each test uses its own model name: pending work
 * is global to the store.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FileRow, NewFile } from '../../src/store/file-store.js'
import type { NewPassage } from '../../src/store/knowledge-store.js'
import type { PendingPassage } from '../../src/store/passage-vector-store.js'
import type { Store } from '../../src/store/store.js'
import { seed, type StoreFactory } from './store.contract.js'
import { passage } from './knowledge.contract.js'
import { WordVectorEmbeddings } from '../../src/domain/knowledge/embeddings/word-vectors.js'

const T0 = 1_700_000_000_000
const uid = (p: string) => `${p}-${randomUUID()}`
/** A vector of `dims` components pointing mostly along axis `axis` (with a little of `mix`). */
const vec = (axis: number, dims = 8, mix = -1, weight = 0.3) => {
  const v = new Float32Array(dims)
  v[axis] = 1
  if (mix >= 0) v[mix] = weight
  return v
}

/** A file of `bot` uploaded and indexed straight through the store, with these passages. */
const newFile = (bot: string, tags: Record<string, string>, expiresAt: number | null): NewFile => ({
  id: uid('file'), botId: bot, key: uid('key') + '.md', contentType: 'text/markdown', uploadNonce: 'n', tags, metadata: {},
  accessPolicies: [], index: true, expiresAt, ownerType: 'bot', ownerId: bot, now: T0,
})

export async function indexedFileIn(store: Store, bot: string, passages: NewPassage[], tags: Record<string, string> = {}, expiresAt: number | null = null): Promise<FileRow & { blobName: string }> {
  const { file } = await store.files.upsertFile(newFile(bot, tags, expiresAt))
  const blobName = uid('blob')
  await store.files.completeUpload({ botId: bot, id: file.id, uploadNonce: 'n', expectedBlobName: null, blobName, size: 10, now: T0 })
  await store.knowledge.markIndexingPending(bot, file.id, blobName, T0)
  await store.knowledge.addPassages(bot, file.id, blobName, passages)
  expect(await store.knowledge.completeIndexing(bot, file.id, blobName, null, T0)).toBe(true)
  return { ...(await store.files.getFile(bot, file.id))!, blobName }
}

export function describePassageVectorContract(name: string, factory: StoreFactory, expectedEngine: string[]): void {
  describe(`PassageVectorStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let botId: string
    let otherBotId: string

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      botId = (await seed(store)).bot.id
      otherBotId = (await seed(store)).bot.id
    })
    afterAll(async () => cleanup?.())

    const indexedFile = (bot: string, passages: NewPassage[], tags: Record<string, string> = {}, expiresAt: number | null = null) => indexedFileIn(store, bot, passages, tags, expiresAt)

    async function pendingOf(file: FileRow & { blobName: string }, model: string): Promise<PendingPassage[]> {
      return store.passageVectors.pendingPassages({ botId: file.botId, fileId: file.id, blobName: file.blobName }, model, 100)
    }

    /** Embeds every pending passage of the file: passage at position i gets vectors[i]. */
    async function embedFile(file: FileRow & { blobName: string }, model: string, vectors: (Float32Array | null)[]): Promise<number> {
      const pending = await pendingOf(file, model)
      return store.passageVectors.putVectors(model, pending.map((p) => ({ passage: p, vector: vectors[p.position]! })))
    }

    const nearest = (bot: string, model: string, vector: Float32Array, extra: Record<string, unknown> = {}) =>
      store.passageVectors.nearest({ botId: bot, model, vector, now: T0, limit: 10, ...extra })

    it('stores the built-in word vectors (100 dims, null for a passage without a known word) and ranks a paraphrase first', async () => {
      const provider = new WordVectorEmbeddings()
      const model = `${provider.model}-${randomUUID()}`
      const texts = [
        'Refunds: the money is paid back within five business days once the returned parcel reaches the warehouse.',
        'Shipping: orders leave Rotterdam by courier and tracking numbers arrive by text message.',
        'Billing: every invoice is emailed on the first day of the month.',
        'qzxqv vvbnm',
      ]
      const file = await indexedFile(botId, texts.map((t, i) => passage(i, t)))
      const pending = await pendingOf(file, model)
      const vectors = await provider.embed(pending.map((p) => p.content))
      expect(vectors[3]).toBeNull()
      expect(await store.passageVectors.putVectors(model, pending.map((p, i) => ({ passage: p, vector: vectors[i] ?? null })))).toBe(4)
      expect(await pendingOf(file, model)).toEqual([])
      expect(await store.passageVectors.dimsOf(model)).toEqual([100])
      const [query] = await provider.embed(['when will I be reimbursed for the package I sent back'])
      const hits = await nearest(botId, model, query!)
      expect(hits[0]!.position).toBe(0)
      expect(hits.map((h) => h.position).sort()).toEqual([0, 1, 2])
    })

    it('vectorsOf: the stored unit vectors of the given passages, by passage id, only for the model and the content they were computed on; null for a refused one', async () => {
      const model = uid('model')
      const file = await indexedFile(botId, [passage(0, 'alpha'), passage(1, 'beta'), passage(2, 'refused'), passage(3, 'not yet')])
      const pending = await pendingOf(file, model)
      await store.passageVectors.putVectors(model, pending.slice(0, 3).map((p) => ({ passage: p, vector: p.position === 2 ? null : vec(p.position).map((x) => x * 5) })))
      const at = (position: number, blobName = file.blobName, fileId = file.id) => ({ fileId, blobName, position })
      const found = await store.passageVectors.vectorsOf(model, [at(0), at(1), at(2), at(3), at(9)])
      // Refused (2) comes back as null (it will never have one); not embedded yet (3) and absent (9) passages have no
      // entry; stored ones come back at unit length.
      expect([...found.keys()].sort()).toEqual([`${file.id}:0`, `${file.id}:1`, `${file.id}:2`])
      expect(found.get(`${file.id}:2`)).toBeNull()
      // embeddedOf: the same passages without their vectors (the ones the backfill is done with).
      expect([...(await store.passageVectors.embeddedOf(model, [at(0), at(1), at(2), at(3), at(9)]))].sort()).toEqual([`${file.id}:0`, `${file.id}:1`, `${file.id}:2`])
      expect((await store.passageVectors.embeddedOf(model, [at(0, uid('blob'))])).size).toBe(0)
      expect(Array.from(found.get(`${file.id}:1`)!)).toEqual(Array.from(vec(1)))
      expect((await store.passageVectors.vectorsOf(uid('other-model'), [at(0)])).size).toBe(0)
      // The file's content changed (another blob): its old vectors do not count.
      expect((await store.passageVectors.vectorsOf(model, [at(0, uid('blob'))])).size).toBe(0)
      expect((await store.passageVectors.vectorsOf(model, [])).size).toBe(0)
      // Many at once (a search's candidates), across files.
      const second = await indexedFile(botId, Array.from({ length: 60 }, (_, i) => passage(i, `p${i}`)))
      await embedFile(second, model, Array.from({ length: 60 }, (_, i) => vec(i % 8)))
      const many = await store.passageVectors.vectorsOf(model, [at(0), ...Array.from({ length: 60 }, (_, i) => at(i, second.blobName, second.id))])
      expect(many.size).toBe(61)
      expect(Array.from(many.get(`${second.id}:13`)!)).toEqual(Array.from(vec(5)))
    })

    it('reports its scoring engine', () => {
      expect(expectedEngine).toContain(store.passageVectors.engine.name)
    })

    it('lists pending files and passages, stores vectors, and then nothing is pending for that model', async () => {
      const model = uid('model')
      const file = await indexedFile(botId, [passage(0, 'alpha'), passage(1, 'beta', 'Doc › B'), passage(2, 'gamma')])
      expect((await store.passageVectors.filesPending(model, T0, 1000)).map((f) => f.fileId)).toContain(file.id)
      const pending = await pendingOf(file, model)
      expect(pending.map((p) => [p.position, p.title, p.content])).toEqual([[0, 'Doc', 'alpha'], [1, 'Doc › B', 'beta'], [2, 'Doc', 'gamma']])
      expect(pending[0]).toMatchObject({ botId, fileId: file.id, blobName: file.blobName })
      expect(await store.passageVectors.putVectors(model, pending.slice(0, 2).map((p) => ({ passage: p, vector: vec(p.position) })))).toBe(2)
      expect((await pendingOf(file, model)).map((p) => p.position)).toEqual([2])
      expect(await embedFile(file, model, [null, null, vec(2)])).toBe(1)
      expect(await pendingOf(file, model)).toEqual([])
      expect((await store.passageVectors.filesPending(model, T0, 1000)).map((f) => f.fileId)).not.toContain(file.id)
      // Another model sees every passage pending.
      expect((await pendingOf(file, uid('other-model'))).length).toBe(3)
      expect(await store.passageVectors.hasVectors(botId, model)).toBe(true)
      expect(await store.passageVectors.hasVectors(otherBotId, model)).toBe(false)
    })

    it('ranks by cosine similarity, best first, whatever the vectors\' lengths; scoped to the bot, model and dimensions', async () => {
      const model = uid('model')
      const file = await indexedFile(botId, [passage(0, 'north'), passage(1, 'east'), passage(2, 'north-east')])
      const scaled = (v: Float32Array, k: number) => v.map((x) => x * k)
      await embedFile(file, model, [scaled(vec(0), 7), vec(1), scaled(vec(0, 8, 1, 0.9), 0.01)])
      const other = await indexedFile(otherBotId, [passage(0, 'north elsewhere')])
      await embedFile(other, model, [vec(0)])

      const hits = await nearest(botId, model, scaled(vec(0, 8, 1, 0.1), 3))
      expect(hits.map((h) => h.content)).toEqual(['north', 'north-east', 'east'])
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
      expect(hits[0]!.score).toBeCloseTo(1 / Math.sqrt(1.01), 4)
      expect(hits[2]!.score).toBeCloseTo(0.1 / Math.sqrt(1.01), 4)
      expect(hits[0]).toMatchObject({ id: `${file.id}:0`, fileId: file.id, position: 0, title: 'Doc', meta: { subtype: 'paragraph' }, file: { id: file.id, key: file.key } })
      expect((await nearest(botId, model, vec(0), { limit: 1 })).map((h) => h.content)).toEqual(['north'])
      // Other model, other length, zero vector: nothing to compare.
      expect(await nearest(botId, uid('model'), vec(0))).toEqual([])
      expect(await nearest(botId, model, vec(0, 16))).toEqual([])
      expect(await nearest(botId, model, new Float32Array(8))).toEqual([])
      expect(await store.passageVectors.dimsOf(model)).toEqual([8])
    })

    it('hides replaced, unfinished and expired content and applies tag filters like the lexical search', async () => {
      const model = uid('model')
      const a = await indexedFile(botId, [passage(0, 'tagged en')], { kbId: 'kb1', lang: 'en' })
      const b = await indexedFile(botId, [passage(0, 'tagged kb2')], { kbId: 'kb2' })
      const expired = await indexedFile(botId, [passage(0, 'expiring')], {}, T0 + 10)
      for (const f of [a, b, expired]) await embedFile(f, model, [vec(3)])
      const ids = async (extra: Record<string, unknown> = {}) => (await nearest(botId, model, vec(3), extra)).map((h) => h.fileId).sort()
      expect(await ids()).toEqual([a.id, b.id, expired.id].sort())
      expect(await ids({ now: T0 + 10 })).toEqual([a.id, b.id].sort())
      expect((await store.passageVectors.filesPending(uid('m'), T0 + 10, 1000)).map((f) => f.fileId)).not.toContain(expired.id)
      expect(await ids({ files: { all: { lang: 'en' } } })).toEqual([a.id])
      expect(await ids({ files: { any: [{ kbId: 'kb2' }, { kbId: 'none' }] } })).toEqual([b.id])
      expect(await ids({ files: { any: [] } })).toEqual([])

      // A new upload hides the old content's vectors at once; its passages become pending once indexed.
      await store.files.upsertFile({ ...newFile(botId, {}, null), id: uid('x'), key: a.key, uploadNonce: 'n2' })
      await store.files.completeUpload({ botId, id: a.id, uploadNonce: 'n2', expectedBlobName: a.blobName, blobName: 'va-2', size: 5, now: T0 })
      expect(await ids()).toEqual([b.id, expired.id].sort())
      await store.knowledge.markIndexingPending(botId, a.id, 'va-2', T0)
      await store.knowledge.addPassages(botId, a.id, 'va-2', [passage(0, 'tagged en, second version')])
      expect((await store.passageVectors.filesPending(model, T0, 1000)).map((f) => f.fileId)).not.toContain(a.id) // not finished
      await store.knowledge.completeIndexing(botId, a.id, 'va-2', null, T0)
      expect((await store.passageVectors.filesPending(model, T0, 1000))).toContainEqual({ botId, fileId: a.id, blobName: 'va-2' })
      // The old content's vector is garbage now (its passage is gone).
      expect(await store.passageVectors.collectGarbage(model, 1000)).toBeGreaterThanOrEqual(1)
      expect(await ids()).toEqual([b.id, expired.id].sort())
    })

    it('stores a vector only if its passage still holds the text it was computed from; forgetFile drops a file\'s vectors', async () => {
      const model = uid('model')
      const file = await indexedFile(botId, [passage(0, 'original text')])
      const [stale] = await pendingOf(file, model)
      // The caller replaces the passages (same blob, same position, other text) while the vector is computed.
      expect(await store.knowledge.setPassages(botId, file.id, file.blobName, [passage(0, 'replaced text')], T0)).toBe(true)
      expect(await store.passageVectors.putVectors(model, [{ passage: stale!, vector: vec(4) }])).toBe(0)
      expect((await pendingOf(file, model)).map((p) => p.content)).toEqual(['replaced text'])
      expect(await embedFile(file, model, [vec(4)])).toBe(1)
      expect((await nearest(botId, model, vec(4))).map((h) => h.content)).toEqual(['replaced text'])
      // Storing again (another instance, same passage) replaces rather than fails.
      const [again] = await pendingOf(file, uid('m'))
      expect(await store.passageVectors.putVectors(model, [{ passage: again!, vector: vec(5) }])).toBe(1)
      expect((await nearest(botId, model, vec(5))).map((h) => h.content)).toEqual(['replaced text'])
      await store.passageVectors.forgetFile(file.id)
      expect(await nearest(botId, model, vec(5))).toEqual([])
      expect((await pendingOf(file, model)).length).toBe(1)
    })

    it('a refused passage is marked: not pending any more, never returned', async () => {
      const model = uid('model')
      const file = await indexedFile(botId, [passage(0, 'refused'), passage(1, 'fine')])
      expect(await embedFile(file, model, [null, vec(6)])).toBe(2)
      expect(await pendingOf(file, model)).toEqual([])
      expect((await nearest(botId, model, vec(6))).map((h) => h.content)).toEqual(['fine'])
      expect(await store.passageVectors.dimsOf(model)).toEqual([8])
    })

    it('model and length changes: other models\' vectors are collected, other lengths dropped on demand', async () => {
      const oldModel = uid('old')
      const newModel = uid('new')
      const file = await indexedFile(botId, [passage(0, 'one'), passage(1, 'two')])
      await embedFile(file, oldModel, [vec(0), vec(1)])
      expect((await pendingOf(file, newModel)).length).toBe(2)
      await embedFile(file, newModel, [vec(0, 4), null])
      expect(await store.passageVectors.collectGarbage(newModel, 1000)).toBeGreaterThanOrEqual(2)
      expect(await nearest(botId, oldModel, vec(0))).toEqual([])
      expect((await nearest(botId, newModel, vec(0, 4))).map((h) => h.content)).toEqual(['one'])
      // The service now answers 16 dimensions under the same name.
      const second = await indexedFile(botId, [passage(0, 'three')])
      await embedFile(second, newModel, [vec(0, 16)])
      expect(await store.passageVectors.dimsOf(newModel)).toEqual([4, 16])
      expect(await store.passageVectors.dropOtherDims(newModel, 16)).toBe(1)
      expect(await store.passageVectors.dimsOf(newModel)).toEqual([16])
      expect((await pendingOf(file, newModel)).map((p) => p.content)).toEqual(['one']) // embedded again; the refusal mark stays
    })

    it('finds the nearest passage among many (past any pre-selection), deleted files take their vectors along', async () => {
      const model = uid('model')
      const dims = 32
      let seedValue = 42
      const random = () => ((seedValue = (seedValue * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5
      const count = 600
      const file = await indexedFile(botId, Array.from({ length: count }, (_, i) => passage(i, `random ${i}`)))
      const vectors = Array.from({ length: count }, () => Float32Array.from({ length: dims }, random))
      const pending = await store.passageVectors.pendingPassages({ botId, fileId: file.id, blobName: file.blobName }, model, count)
      expect(await store.passageVectors.putVectors(model, pending.map((p) => ({ passage: p, vector: vectors[p.position]! })))).toBe(count)
      const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)
      const cos = (a: Float32Array, b: Float32Array) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b))
      for (const target of [17, 333, 599]) {
        const query = vectors[target]!.map((x) => x + random() * 0.2)
        const expected = vectors.map((v, i) => ({ i, s: cos(v, query) })).sort((x, y) => y.s - x.s).slice(0, 5).map((x) => x.i)
        const hits = await nearest(botId, model, query, { limit: 5 })
        expect(hits[0]!.position).toBe(target)
        expect(hits.map((h) => h.position)).toEqual(expected)
      }
      await store.files.deleteFile(botId, file.id)
      expect(await nearest(botId, model, vectors[17]!)).toEqual([])
      expect(await store.passageVectors.dimsOf(model)).toEqual([])
    })

    it('backfill claims: one holder at a time, renewed by the holder, taken over when stale, released by the holder', async () => {
      const file = await indexedFile(botId, [passage(0, 'claimed')])
      expect(await store.passageVectors.claim(file.id, 'a', T0, T0 - 100)).toBe(true)
      expect(await store.passageVectors.claim(file.id, 'b', T0 + 1, T0 - 100)).toBe(false)
      expect(await store.passageVectors.claim(file.id, 'a', T0 + 2, T0 - 100)).toBe(true)
      expect(await store.passageVectors.claim(file.id, 'b', T0 + 3, T0 + 3)).toBe(true) // stale
      await store.passageVectors.release(file.id, 'a') // not the holder
      expect(await store.passageVectors.claim(file.id, 'c', T0 + 4, T0 - 100)).toBe(false)
      await store.passageVectors.release(file.id, 'b')
      expect(await store.passageVectors.claim(file.id, 'c', T0 + 5, T0 - 100)).toBe(true)
    })
  })
}
