/**
 * Contract of KnowledgeStore (src/store/knowledge-store.ts), run against each engine: SQLite FTS5 and
 * PostgreSQL tsvector must agree on what is found, what is hidden (other bots, other content versions,
 * unfinished indexing, expired files, tag filters) and how knowledge bases page.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FileRow, NewFile } from '../../src/store/file-store.js'
import type { NewPassage } from '../../src/store/knowledge-store.js'
import { UniqueViolation, type Store } from '../../src/store/store.js'
import { seed, type StoreFactory } from './store.contract.js'

const T0 = 1_700_000_000_000
const uid = (p: string) => `${p}-${randomUUID()}`

/** A passage of a test file (a paragraph under `title`). */
export const passage = (position: number, content: string, title = 'Doc'): NewPassage => ({ position, title, content, meta: { subtype: 'paragraph' } })

export function describeKnowledgeContract(name: string, factory: StoreFactory): void {
  describe(`KnowledgeStore contract: ${name}`, () => {
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

    const newFile = (bot: string, tags: Record<string, string> = {}, expiresAt: number | null = null): NewFile => ({
      id: uid('file'), botId: bot, key: uid('key') + '.md', contentType: 'text/markdown', uploadNonce: 'n', tags, metadata: {},
      accessPolicies: [], index: true, expiresAt, ownerType: 'bot', ownerId: bot, now: T0,
    })

    /** An uploaded file of `bot` (status upload_completed). */
    async function uploadedFile(bot: string, tags: Record<string, string> = {}, expiresAt: number | null = null): Promise<FileRow & { blobName: string }> {
      const { file } = await store.files.upsertFile(newFile(bot, tags, expiresAt))
      const blobName = uid('blob')
      const done = await store.files.completeUpload({ botId: bot, id: file.id, uploadNonce: 'n', expectedBlobName: null, blobName, size: 10, now: T0 })
      return { ...done!, blobName }
    }

    /** An uploaded, indexed file of `bot` with these passages (status indexing_completed). */
    async function indexedFile(bot: string, passages: NewPassage[], tags: Record<string, string> = {}, expiresAt: number | null = null): Promise<FileRow> {
      const { id, blobName } = await uploadedFile(bot, tags, expiresAt)
      expect(await store.knowledge.markIndexingPending(bot, id, blobName, T0)).toMatchObject({ status: 'indexing_pending' })
      await store.knowledge.addPassages(bot, id, blobName, passages)
      expect(await store.knowledge.completeIndexing(bot, id, blobName, null, T0)).toBe(true)
      return (await store.files.getFile(bot, id))!
    }

    const search = (bot: string, terms: string[], extra: Partial<Parameters<Store['knowledge']['searchPassages']>[0]> = {}) =>
      store.knowledge.searchPassages({ botId: bot, terms, now: T0, limit: 10, ...extra })

    it('finds passages by stemmed terms, best first, scoped to the bot', async () => {
      const file = await indexedFile(botId, [passage(0, 'Penguins are swimming in cold water'), passage(1, 'Penguin colonies swim together; penguins swim far')])
      await indexedFile(otherBotId, [passage(0, 'penguins swimming everywhere')])
      const hits = await search(botId, ['penguin', 'swim'])
      expect(hits.map((h) => h.fileId)).toEqual([file.id, file.id])
      expect(hits[0]!.position).toBe(1) // more occurrences rank higher
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
      expect(hits[0]!.file.key).toBe(file.key)
      expect(await search(uid('nobot'), ['penguin'])).toEqual([])
    })

    it("a bot's best passages are found however many better matches other bots hold (SQLite ranks the index first, then filters)", async () => {
      const bot = (await seed(store)).bot.id
      const crowd = (await seed(store)).bot.id
      await indexedFile(crowd, Array.from({ length: 260 }, (_, i) => passage(i, `walrus walrus walrus tusk ${i}`)))
      const mine = await indexedFile(bot, [passage(0, 'A walrus sleeps on the ice among seals'), passage(1, 'Nothing about it here')])
      const hits = await search(bot, ['walrus'])
      expect(hits.map((h) => [h.fileId, h.position])).toEqual([[mine.id, 0]])
      // And with matches of its own, the bot's best first, limit respected.
      await indexedFile(bot, Array.from({ length: 30 }, (_, i) => passage(i, i === 7 ? 'walrus walrus walrus walrus tusks' : `walrus number ${i} and a long tail of other words to lower its weight`)))
      const many = await search(bot, ['walrus'], { limit: 5 })
      expect(many).toHaveLength(5)
      expect(many[0]!.content).toBe('walrus walrus walrus walrus tusks')
      for (const h of many) expect(h.file.botId).toBe(bot)
      for (let i = 1; i < many.length; i++) expect(many[i - 1]!.score).toBeGreaterThanOrEqual(many[i]!.score)
    })

    it('term frequencies: passages, and how many contain each (stemmed) term; hostile terms count nothing; none for a bot without passages', async () => {
      const bot = (await seed(store)).bot.id
      await indexedFile(bot, [passage(0, 'Penguins are sleeping on the ice'), passage(1, 'A penguin sleeps; seals swim'), passage(2, 'Seals swimming')])
      await indexedFile(otherBotId, [passage(0, 'penguin penguin penguin')])
      const { total, df } = await store.knowledge.termFrequencies(bot, ['penguin', 'sleep', 'swim', 'zebra', '"', 'OR'])
      // PostgreSQL counts the bot's passages; SQLite may count every bot's (see the interface).
      expect(total).toBeGreaterThanOrEqual(3)
      for (const t of ['penguin', 'sleep', 'swim']) expect(df.get(t)).toBeGreaterThanOrEqual(2)
      expect(df.get('penguin')).toBeLessThan(total)
      expect(df.get('zebra')).toBe(0)
      expect(df.has('"')).toBe(false)
      expect((await store.knowledge.termFrequencies(uid('nobot'), ['penguin'])).total).toBe(0)
    })

    it('terms are data, never query syntax; prefixes match word starts', async () => {
      await indexedFile(botId, [passage(0, 'zeppelin hangar maintenance')])
      for (const t of ['"', '*', 'NEAR', 'a"b', 'OR', '-x', 'x:y', '(', "'"]) await expect(search(botId, [t])).resolves.toBeInstanceOf(Array)
      expect((await search(botId, [], { prefixes: ['zeppe'] })).length).toBe(1)
      expect(await search(botId, [])).toEqual([])
    })

    it('hides unfinished, failed, superseded and expired content; tag filters are AND within a set, OR across sets', async () => {
      const tagged = await indexedFile(botId, [passage(0, 'aardvark burrow')], { kbId: 'kb1', lang: 'en' })
      const other = await indexedFile(botId, [passage(0, 'aardvark diet')], { kbId: 'kb2' })
      await indexedFile(botId, [passage(0, 'aardvark expired')], {}, T0 - 1)
      expect((await search(botId, ['aardvark'])).map((h) => h.fileId).sort()).toEqual([tagged.id, other.id].sort())
      expect((await search(botId, ['aardvark'], { files: { all: { lang: 'en' } } })).map((h) => h.fileId)).toEqual([tagged.id])
      expect((await search(botId, ['aardvark'], { files: { any: [{ kbId: 'kb2' }, { kbId: 'none' }] } })).map((h) => h.fileId)).toEqual([other.id])
      expect(await search(botId, ['aardvark'], { files: { any: [] } })).toEqual([])

      // A new upload (new blob) hides the old passages at once; the new ones appear when indexing completes.
      await store.files.upsertFile({ id: uid('x'), botId, key: tagged.key, contentType: 'text/markdown', uploadNonce: 'n2', tags: {}, metadata: {}, accessPolicies: [], index: true, expiresAt: null, ownerType: 'bot', ownerId: botId, now: T0 })
      await store.files.completeUpload({ botId, id: tagged.id, uploadNonce: 'n2', expectedBlobName: tagged.blobName, blobName: 'blob-v2', size: 5, now: T0 })
      expect((await search(botId, ['aardvark'])).map((h) => h.fileId)).toEqual([other.id])
      await store.knowledge.markIndexingPending(botId, tagged.id, 'blob-v2', T0)
      await store.knowledge.addPassages(botId, tagged.id, 'blob-v2', [passage(0, 'aardvark version two')])
      expect((await search(botId, ['version'])).length).toBe(0) // not completed yet
      expect((await store.knowledge.listPendingIndexing(100)).map((f) => f.id)).toContain(tagged.id)
      // Completing with a stale blob is refused and leaves the file pending.
      expect(await store.knowledge.completeIndexing(botId, tagged.id, 'blob-v1-stale', null, T0)).toBe(false)
      expect(await store.knowledge.completeIndexing(botId, tagged.id, 'blob-v2', null, T0)).toBe(true)
      expect((await search(botId, ['version'])).map((h) => h.content)).toEqual(['aardvark version two'])
      expect((await store.knowledge.listFilePassages(botId, tagged.id, { limit: 10 })).items.map((p) => p.content)).toEqual(['aardvark version two'])

      // A failure marks the file and drops the attempt's passages.
      const failing = await indexedFile(botId, [passage(0, 'okapi')])
      // A new upload needs a new upload URL (nonce): a URL works once.
      await store.files.upsertFile({ id: uid('x'), botId, key: failing.key, contentType: 'text/markdown', uploadNonce: 'n3', tags: {}, metadata: {}, accessPolicies: [], index: true, expiresAt: null, ownerType: 'bot', ownerId: botId, now: T0 })
      await store.files.completeUpload({ botId, id: failing.id, uploadNonce: 'n3', expectedBlobName: failing.blobName, blobName: 'blob-f2', size: 1, now: T0 })
      await store.knowledge.markIndexingPending(botId, failing.id, 'blob-f2', T0)
      await store.knowledge.addPassages(botId, failing.id, 'blob-f2', [passage(0, 'okapi two')])
      expect(await store.knowledge.completeIndexing(botId, failing.id, 'blob-f2', 'bad file', T0)).toBe(true)
      expect(await store.files.getFile(botId, failing.id)).toMatchObject({ status: 'indexing_failed', failedStatusReason: 'bad file' })
      expect(await search(botId, ['okapi'])).toEqual([])
    })

    it('lists passages in order with paging, around a position, and deletes them', async () => {
      const file = await indexedFile(botId, Array.from({ length: 5 }, (_, i) => passage(i, `walrus paragraph ${i}`)))
      const first = await store.knowledge.listFilePassages(botId, file.id, { limit: 3 })
      expect(first.items.map((p) => p.position)).toEqual([0, 1, 2])
      expect(first.items[0]!.id).toBe(`${file.id}:0`)
      const second = await store.knowledge.listFilePassages(botId, file.id, { limit: 3, after: first.next })
      expect(second.items.map((p) => p.position)).toEqual([3, 4])
      expect(second.next).toBeUndefined()
      expect((await store.knowledge.passagesAround(botId, file.id, 2, 1)).map((p) => p.position)).toEqual([1, 2, 3])
      expect((await store.knowledge.listFilePassages(otherBotId, file.id, { limit: 3 })).items).toEqual([])
      await store.knowledge.deleteFilePassages(botId, file.id)
      expect((await store.knowledge.listFilePassages(botId, file.id, { limit: 3 })).items).toEqual([])
    })

    it('indexing claims: one holder at a time, taken over when stale or for new content, released by the holder', async () => {
      const file = await indexedFile(botId, [passage(0, 'claimed')])
      expect(await store.knowledge.claimIndexing(file.id, 'b1', 'inst-a', T0, T0 - 100)).toBe(true)
      expect(await store.knowledge.claimIndexing(file.id, 'b1', 'inst-b', T0 + 1, T0 - 100)).toBe(false)
      expect(await store.knowledge.claimIndexing(file.id, 'b1', 'inst-a', T0 + 2, T0 - 100)).toBe(true) // the holder renews
      expect(await store.knowledge.claimIndexing(file.id, 'b2', 'inst-b', T0 + 3, T0 - 100)).toBe(true) // newer content
      expect(await store.knowledge.claimIndexing(file.id, 'b2', 'inst-c', T0 + 4, T0 + 4)).toBe(true) // stale claim
      await store.knowledge.releaseIndexing(file.id, 'inst-b') // not the holder: no effect
      expect(await store.knowledge.claimIndexing(file.id, 'b2', 'inst-d', T0 + 5, T0 - 100)).toBe(false)
      await store.knowledge.releaseIndexing(file.id, 'inst-c')
      expect(await store.knowledge.claimIndexing(file.id, 'b2', 'inst-d', T0 + 6, T0 - 100)).toBe(true)
    })

    it('setPassages replaces every passage and completes the file, only while its content is the given blob', async () => {
      const file = await indexedFile(botId, [passage(0, 'narwhal tusk'), passage(1, 'narwhal pod')])
      const given = [passage(0, 'caller capybara one', 'Doc › Intro'), { ...passage(1, 'caller capybara two'), meta: { subtype: 'image' as const, pageNumber: 3 } }]
      expect(await store.knowledge.setPassages(botId, file.id, file.blobName!, given, T0 + 5)).toBe(true)
      expect(await store.files.getFile(botId, file.id)).toMatchObject({ status: 'indexing_completed', updatedAt: T0 + 5 })
      const listed = await store.knowledge.listFilePassages(botId, file.id, { limit: 10 })
      expect(listed.items.map((p) => [p.position, p.title, p.content, p.meta])).toEqual([
        [0, 'Doc › Intro', 'caller capybara one', { subtype: 'paragraph' }], [1, 'Doc', 'caller capybara two', { subtype: 'image', pageNumber: 3 }],
      ])
      expect(await search(botId, ['narwhal'])).toEqual([])
      expect((await search(botId, ['capybara'])).map((h) => h.position).sort()).toEqual([0, 1])
      // An empty list clears them.
      expect(await store.knowledge.setPassages(botId, file.id, file.blobName!, [], T0)).toBe(true)
      expect((await store.knowledge.listFilePassages(botId, file.id, { limit: 10 })).items).toEqual([])

      // Another blob, another bot, or a file whose upload has not landed: refused, nothing written.
      const uploaded = await uploadedFile(botId)
      expect(await store.knowledge.setPassages(botId, uploaded.id, 'stale-blob', [passage(0, 'ocelot')], T0)).toBe(false)
      expect(await store.knowledge.setPassages(otherBotId, uploaded.id, uploaded.blobName, [passage(0, 'ocelot')], T0)).toBe(false)
      await store.files.upsertFile({ ...newFile(botId), key: uploaded.key, uploadNonce: 'n2' }) // re-upsert: upload_pending, same blob
      expect(await store.knowledge.setPassages(botId, uploaded.id, uploaded.blobName, [passage(0, 'ocelot')], T0)).toBe(false)
      expect(await store.files.getFile(botId, uploaded.id)).toMatchObject({ status: 'upload_pending' })
      expect((await store.knowledge.listFilePassages(botId, uploaded.id, { limit: 10 })).items).toEqual([])
      // An upload_completed file (not indexed) takes passages.
      const plain = await uploadedFile(botId)
      expect(await store.knowledge.setPassages(botId, plain.id, plain.blobName, [passage(0, 'ocelot')], T0)).toBe(true)
      expect((await search(botId, ['ocelot'])).map((h) => h.fileId)).toEqual([plain.id])
    })

    it('createStoredFile: a complete file with its blob and tags; a taken key throws UniqueViolation; replacing is atomic', async () => {
      const stored = (over: Partial<NewFile> = {}) => ({ ...newFile(botId, { a: '1' }), key: 'stored-key', blobName: uid('blob'), size: 42, ...over })
      const first = stored()
      const { file, replaced } = await store.files.createStoredFile(first)
      expect(replaced).toBeUndefined()
      expect(file).toMatchObject({ id: first.id, key: 'stored-key', status: 'upload_completed', size: 42, blobName: first.blobName, tags: { a: '1' }, index: true })
      expect(await store.files.getFileByKey(botId, 'stored-key')).toEqual(file)
      // The same key without replacing: refused, the first file is untouched.
      await expect(store.files.createStoredFile(stored())).rejects.toBeInstanceOf(UniqueViolation)
      // The key in another bot is free.
      expect((await store.files.createStoredFile({ ...stored(), botId: otherBotId, ownerId: otherBotId })).file.botId).toBe(otherBotId)
      // Replacing another file than the key's holder: the key is still taken, and the other file comes back (rollback).
      const bystander = await uploadedFile(botId)
      await expect(store.files.createStoredFile(stored(), bystander.id)).rejects.toBeInstanceOf(UniqueViolation)
      expect(await store.files.getFile(botId, bystander.id)).toBeDefined()
      // Replacing the holder: it is returned with its tags, and the new row takes the key.
      const second = stored({ tags: { b: '2' } })
      const swap = await store.files.createStoredFile(second, first.id)
      expect(swap.replaced).toMatchObject({ id: first.id, blobName: first.blobName, tags: { a: '1' } })
      expect(await store.files.getFile(botId, first.id)).toBeUndefined()
      expect(await store.files.getFileByKey(botId, 'stored-key')).toMatchObject({ id: second.id, tags: { b: '2' } })
    })

    it('tag names and values: distinct over the bot\'s live files, byte order, keyset paging', async () => {
      const bot = (await seed(store)).bot.id
      const long = 'v'.repeat(999)
      await uploadedFile(bot, { color: 'red', size: 'L', Zeta: 'x' })
      await uploadedFile(bot, { color: 'blue', size: 'L' })
      await uploadedFile(bot, { color: 'Red', 'é': long + '1' })
      await uploadedFile(bot, { color: 'éclat', 'é': long + '2' })
      await uploadedFile(bot, { expired: 'yes', color: 'ghost' }, T0 - 1)
      await uploadedFile(otherBotId, { foreign: 'x', color: 'green' })
      const all = async (list: (after: string | undefined) => Promise<{ items: string[]; next?: string | undefined }>) => {
        const out: string[] = []
        let after: string | undefined
        do {
          const page = await list(after)
          expect(page.items.length).toBeLessThanOrEqual(2)
          out.push(...page.items)
          after = page.next
        } while (after)
        return out
      }
      expect(await all((after) => store.files.listTagNames(bot, T0, { after, limit: 2 }))).toEqual(['Zeta', 'color', 'size', 'é'])
      expect(await all((after) => store.files.listTagValues(bot, 'color', T0, { after, limit: 2 }))).toEqual(['Red', 'blue', 'red', 'éclat'])
      expect(await all((after) => store.files.listTagValues(bot, 'é', T0, { after, limit: 1 }))).toEqual([long + '1', long + '2'])
      expect((await store.files.listTagNames(bot, T0, { limit: 10 })).next).toBeUndefined()
      expect((await store.files.listTagValues(bot, 'nope', T0, { limit: 10 })).items).toEqual([])
      // The expired file counts again before its expiry.
      expect((await store.files.listTagNames(bot, T0 - 10, { limit: 10 })).items).toContain('expired')
      await expect(store.files.listTagNames(bot, T0, { after: 'forged!', limit: 2 })).rejects.toMatchObject({ type: 'InvalidQuery' })
    })

    it('vocabulary: known terms and prefix lookups per bot', async () => {
      await store.knowledge.addTerms(botId, ['lighthouse', 'lightning', 'lamp', 'lighthouse', 'bad term'])
      expect([...(await store.knowledge.knownTerms(botId, ['lighthouse', 'ligthouse']))]).toEqual(['lighthouse'])
      expect(await store.knowledge.termsWithPrefix(botId, 'ligh', 10)).toEqual(['lighthouse', 'lightning'])
      expect(await store.knowledge.termsWithPrefix(otherBotId, 'ligh', 10)).toEqual([])
      expect(await store.knowledge.termsWithPrefix(botId, '"', 10)).toEqual([])
    })

    it('knowledge bases: create, get, update, list with tags and paging, delete; scoped to the bot', async () => {
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        const kb = await store.knowledge.createKnowledgeBase({ id: uid('kb'), botId: otherBotId, name: `KB ${i}`, tags: i === 1 ? { team: 'a' } : {}, createdAt: T0 + i, updatedAt: T0 + i })
        ids.push(kb.id)
      }
      expect(await store.knowledge.getKnowledgeBase(botId, ids[0]!)).toBeUndefined()
      const p1 = await store.knowledge.listKnowledgeBases(otherBotId, undefined, { limit: 2 })
      expect(p1.items.map((k) => k.id)).toEqual(ids.slice(0, 2))
      const p2 = await store.knowledge.listKnowledgeBases(otherBotId, undefined, { limit: 2, after: p1.next })
      expect(p2.items.map((k) => k.id)).toEqual([ids[2]])
      expect((await store.knowledge.listKnowledgeBases(otherBotId, { team: 'a' }, { limit: 10 })).items.map((k) => k.id)).toEqual([ids[1]])
      expect(await store.knowledge.updateKnowledgeBase(otherBotId, ids[0]!, { name: 'Renamed', tags: { x: 'y' } }, T0 + 9)).toMatchObject({ name: 'Renamed', tags: { x: 'y' }, updatedAt: T0 + 9 })
      expect(await store.knowledge.updateKnowledgeBase(botId, ids[0]!, { name: 'Stolen', tags: {} }, T0)).toBeUndefined()
      expect(await store.knowledge.deleteKnowledgeBase(botId, ids[0]!)).toBe(false)
      expect(await store.knowledge.deleteKnowledgeBase(otherBotId, ids[0]!)).toBe(true)
      expect(await store.knowledge.getKnowledgeBase(otherBotId, ids[0]!)).toBeUndefined()
    })
  })
}
