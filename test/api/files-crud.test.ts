/**
 * Files API operations through app.inject: upsertFile, getFile (by id and key), listFiles (paging,
 * sorting, filters), updateFileMetadata, deleteFile, validation and limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createFile, expectError, ownerHeaders, uniqueKey, upload, upsert } from './files-helpers.js'
import { ISO_Z } from '../helpers/formats.js'


describe('Files API: operations', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  const get = (idOrKey: string, headers = ownerHeaders(h)) =>
    h.app.inject({ method: 'GET', url: `/v1/files/${encodeURIComponent(idOrKey)}`, headers })
  const list = (query: string, headers = ownerHeaders(h)) => h.app.inject({ method: 'GET', url: `/v1/files?${query}`, headers })
  const update = (idOrKey: string, body: Record<string, unknown>) =>
    h.app.inject({ method: 'PUT', url: `/v1/files/${encodeURIComponent(idOrKey)}`, headers: ownerHeaders(h), payload: body })
  const remove = (idOrKey: string) =>
    h.app.inject({ method: 'DELETE', url: `/v1/files/${encodeURIComponent(idOrKey)}`, headers: ownerHeaders(h), payload: {} })

  describe('upsertFile', () => {
    it('returns the pending file with an absolute signed uploadUrl and the full File shape', async () => {
      const key = uniqueKey('doc')
      const res = await upsert(h, { key, size: 5, tags: { kind: 'doc' }, metadata: { a: 1, nested: { b: [true] } } })
      expect(res.statusCode, res.body).toBe(200)
      const { file } = res.json()
      expect(Object.keys(file).sort()).toEqual(
        ['accessPolicies', 'botId', 'contentType', 'createdAt', 'id', 'index', 'key', 'metadata', 'owner', 'size', 'status', 'tags', 'updatedAt', 'uploadUrl', 'url'].sort(),
      )
      expect(file).toMatchObject({
        botId: h.credentials.botId, key, size: null, status: 'upload_pending', contentType: 'text/plain', tags: { kind: 'doc' },
        metadata: { a: 1, nested: { b: [true] } }, accessPolicies: [], index: false, owner: { type: 'user' },
      })
      expect(typeof file.owner.id).toBe('string')
      expect(file.createdAt).toMatch(ISO_Z)
      expect(file.updatedAt).toMatch(ISO_Z)
      expect(file.uploadUrl).toMatch(new RegExp(`^${h.config.publicUrl}/v1/files/uploads/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`))
      expect(file.url).toMatch(new RegExp(`^${h.config.publicUrl}/v1/files/content/${h.credentials.botId}/${file.id}\\?expires=\\d+&signature=`))
    })

    it('infers the content type from the key extension, defaults to application/octet-stream, and validates explicit ones', async () => {
      const cases: [string, string][] = [
        ['photo.PNG', 'image/png'], ['a/b/report.pdf', 'application/pdf'], ['data.json', 'application/json'], ['page.html', 'text/html'],
        ['noext', 'application/octet-stream'], ['weird.unknownext', 'application/octet-stream'], ['.hidden', 'application/octet-stream'],
      ]
      for (const [key, type] of cases) {
        const res = await upsert(h, { key: `${Math.random().toString(36).slice(2)}-${key}`, size: 1 })
        expect(res.json().file.contentType, key).toBe(type)
      }
      const explicit = await upsert(h, { key: uniqueKey(), size: 1, contentType: 'text/csv; charset=utf-8' })
      expect(explicit.json().file.contentType).toBe('text/csv; charset=utf-8')
      for (const bad of ['text', 'text/', '/plain', 'text/plain\r\nx-evil: 1', 'text/plain; charset', 'a b/c', 'x'.repeat(300) + '/y']) {
        expectError(await upsert(h, { key: uniqueKey(), size: 1, contentType: bad }), 400, 'InvalidPayload')
      }
    })

    it('validates key, size, tags, accessPolicies, expiresAt and unknown fields (400)', async () => {
      const bad: Record<string, unknown>[] = [
        {},
        { key: 'x' },
        { size: 1 },
        { key: '', size: 1 },
        { key: 'k'.repeat(1025), size: 1 },
        { key: 'a\u0000b', size: 1 },
        { key: 'a\nb', size: 1 },
        { key: 'a\u0085b', size: 1 },
        { key: 'x', size: -1 },
        { key: 'x', size: 1.5 },
        { key: 'x', size: '1' },
        { key: 'x', size: 1, tags: { a: 1 } },
        { key: 'x', size: 1, tags: { '': 'v' } },
        { key: 'x', size: 1, tags: { 'a\rb': 'v' } },
        { key: 'x', size: 1, accessPolicies: ['everyone'] },
        { key: 'x', size: 1, expiresAt: 'tomorrow' },
        { key: 'x', size: 1, expiresAt: new Date(Date.now() - 60_000).toISOString() },
        { key: 'x', size: 1, expiresAt: new Date(Date.now() + 91 * 24 * 3600_000).toISOString() },
        { key: 'x', size: 1, unknownField: true },
        { key: 'x', size: 1, metadata: [] },
      ]
      for (const body of bad) expectError(await upsert(h, body), 400, 'InvalidPayload')
      // 1024 characters is the maximum, counted in code points.
      expect((await upsert(h, { key: 'k'.repeat(1024), size: 1 })).statusCode).toBe(200)
      expect((await upsert(h, { key: '😀'.repeat(1024), size: 1 })).statusCode).toBe(200)
    })

    it('refuses a declared size above maxFileBytes with 413 PayloadTooLarge', async () => {
      expectError(await upsert(h, { key: uniqueKey(), size: h.config.maxFileBytes + 1 }), 413, 'PayloadTooLarge')
      expect((await upsert(h, { key: uniqueKey(), size: h.config.maxFileBytes })).statusCode).toBe(200)
    })

    it('refuses JSON bodies over the Files API limit (1 MB) with 413 PayloadTooLarge', async () => {
      const res = await upsert(h, { key: uniqueKey(), size: 1, metadata: { blob: 'x'.repeat(h.config.filesBodyLimit) } })
      expectError(res, 413, 'PayloadTooLarge')
      // Just under the limit is accepted.
      const ok = await upsert(h, { key: uniqueKey(), size: 1, metadata: { blob: 'x'.repeat(h.config.filesBodyLimit - 1000) } })
      expect(ok.statusCode).toBe(200)
    })

    it('is idempotent on the key: same id, fields replaced, reset to upload_pending until the new upload lands', async () => {
      const key = uniqueKey('re')
      const first = await createFile(h, key, 'first version', { tags: { v: '1', keep: 'no' }, metadata: { m: 1 }, accessPolicies: ['public_content'] })
      expect(first).toMatchObject({ status: 'upload_completed', size: 13 })
      const again = await upsert(h, { key, size: 15, tags: { v: '2' }, contentType: 'text/markdown' })
      const pending = again.json().file
      expect(pending).toMatchObject({ id: first.id, key, status: 'upload_pending', size: null, tags: { v: '2' }, metadata: {}, accessPolicies: [], contentType: 'text/markdown' })
      expect(pending.createdAt).toBe(first.createdAt)
      // Replayed upserts (axios-retry replays PUT) keep a single file for the key.
      const replay = (await upsert(h, { key, size: 15 })).json().file
      expect(replay.id).toBe(first.id)
      const listed = await list(`ids=${first.id}`)
      expect(listed.json().files).toHaveLength(1)
      // Each upsert supersedes the previous upload URL.
      expectError(await upload(h, pending.uploadUrl, 'second version!'), 403, 'Forbidden')
      expect((await upload(h, replay.uploadUrl, 'second version!')).statusCode).toBe(200)
      expect((await get(key)).json().file).toMatchObject({ id: first.id, status: 'upload_completed', size: 15 })
    })

    it('records the owner: user for a personal access token', async () => {
      const res = await upsert(h, { key: uniqueKey(), size: 1 })
      expect(res.json().file.owner.type).toBe('user')
    })

    it('accepts and ignores the integration/user headers and the indexing options', async () => {
      const res = await upsert(
        h,
        { key: uniqueKey(), size: 1, index: true, indexing: { configuration: { parsing: { mode: 'standard' } } }, publicContentImmediatelyAccessible: true },
        ownerHeaders(h, { 'x-integration-id': 'intg', 'x-integration-alias': 'alias', 'x-integration-name': 'n', 'x-user-id': 'u', 'x-user-role': 'r' }),
      )
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().file).toMatchObject({ index: true, status: 'upload_pending' })
    })

    it('truncates expiresAt to the minute and returns it as ISO', async () => {
      const at = new Date(Date.now() + 3 * 3600_000 + 12_345)
      const res = await upsert(h, { key: uniqueKey(), size: 1, expiresAt: at.toISOString() })
      const expected = new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString()
      expect(res.json().file.expiresAt).toBe(expected)
    })
  })

  describe('getFile', () => {
    it('finds a file by id and by key, keys being opaque strings (slashes, dots, unicode, spaces)', async () => {
      for (const key of ['folder/sub/file name.txt', '../../etc/passwd', 'ünï ✓ 😀.md', 'a%2Fb', '?#&=+;']) {
        const res = await upsert(h, { key, size: 3 })
        expect(res.statusCode, key).toBe(200)
        const { file } = res.json()
        expect((await get(file.id)).json().file).toMatchObject({ id: file.id, key })
        expect((await get(key)).json().file).toMatchObject({ id: file.id, key })
      }
    })

    it('404 ResourceNotFound for unknown ids and keys', async () => {
      expectError(await get('no-such-file'), 404, 'ResourceNotFound')
      expectError(await get('01900000-0000-7000-8000-000000000000'), 404, 'ResourceNotFound')
    })
  })

  describe('listFiles', () => {
    const prefix = `list-${Date.now().toString(36)}`
    const created: { id: string; key: string }[] = []

    beforeAll(async () => {
      // 25 files tagged with this run's prefix; sizes vary; a third are indexed.
      for (let i = 0; i < 25; i++) {
        const key = `${prefix}/${String(i).padStart(2, '0')}.txt`
        const body = 'x'.repeat((i * 7) % 11)
        const res = await upsert(h, { key, size: body.length, tags: { run: prefix, parity: i % 2 ? 'odd' : 'even' }, index: i % 3 === 0 })
        const { file } = res.json()
        if (i % 5 !== 0) await upload(h, file.uploadUrl, body)
        created.push({ id: file.id, key })
      }
    })

    async function collect(query: string): Promise<{ files: { id: string; key: string; size: number | null; status: string; createdAt: string }[]; pages: number }> {
      const files = []
      let pages = 0
      let token: string | undefined
      do {
        const res = await list(`${query}${token ? `&nextToken=${encodeURIComponent(token)}` : ''}`)
        expect(res.statusCode, res.body).toBe(200)
        const body = res.json()
        files.push(...body.files)
        token = body.meta.nextToken
        pages++
        expect(pages).toBeLessThan(100)
      } while (token)
      return { files, pages }
    }

    it('pages with nextToken over every sort field and direction, never skipping or repeating', async () => {
      for (const sortField of ['key', 'size', 'createdAt', 'updatedAt', 'status']) {
        for (const sortDirection of ['asc', 'desc']) {
          const { files, pages } = await collect(`tags.run=${prefix}&pageSize=4&sortField=${sortField}&sortDirection=${sortDirection}`)
          expect(pages).toBe(7)
          expect(files.map((f) => f.id).sort()).toEqual(created.map((c) => c.id).sort())
          expect(new Set(files.map((f) => f.id)).size).toBe(25)
          const values = files.map((f) => (sortField === 'size' ? (f.size ?? -1) : (f as Record<string, unknown>)[sortField] as string | number))
          const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
          if (sortDirection === 'desc') sorted.reverse()
          expect(values, `${sortField} ${sortDirection}`).toEqual(sorted)
        }
      }
    })

    it('defaults to pageSize 20 and createdAt desc; the last page has no nextToken', async () => {
      const first = (await list(`tags.run=${prefix}`)).json()
      expect(first.files).toHaveLength(20)
      expect(first.files[0].key).toBe(`${prefix}/24.txt`)
      expect(typeof first.meta.nextToken).toBe('string')
      const second = (await list(`tags.run=${prefix}&nextToken=${encodeURIComponent(first.meta.nextToken)}`)).json()
      expect(second.files).toHaveLength(5)
      expect(second.meta).toEqual({})
    })

    it('filters by several tags (all must match), ids (single or repeated) and indexed', async () => {
      const odd = await collect(`tags.run=${prefix}&tags.parity=odd&pageSize=100`)
      expect(odd.files).toHaveLength(12)
      const none = await collect(`tags.run=${prefix}&tags.parity=nope`)
      expect(none.files).toHaveLength(0)
      const one = (await list(`ids=${created[3]!.id}`)).json()
      expect(one.files.map((f: { id: string }) => f.id)).toEqual([created[3]!.id])
      const two = (await list(`ids=${created[3]!.id}&ids=${created[4]!.id}&sortField=key&sortDirection=asc`)).json()
      expect(two.files.map((f: { key: string }) => f.key)).toEqual([created[3]!.key, created[4]!.key])
      const indexed = await collect(`tags.run=${prefix}&indexed=true`)
      expect(indexed.files).toHaveLength(9)
      const notIndexed = await collect(`tags.run=${prefix}&indexed=false`)
      expect(notIndexed.files).toHaveLength(16)
    })

    it('400 InvalidQuery for bad parameters and foreign or forged tokens', async () => {
      const ids = Array.from({ length: 51 }, (_, i) => `ids=x${i}`).join('&')
      for (const query of ['pageSize=0', 'pageSize=101', 'pageSize=abc', 'sortField=name', 'sortDirection=up', 'indexed=maybe', ids, 'nextToken=%%%', 'nextToken=abc', 'tags=plain']) {
        expectError(await list(query), 400, 'InvalidQuery')
      }
      const page = (await list(`tags.run=${prefix}&pageSize=2&sortField=key`)).json()
      // A token is bound to its sort: reusing it with another sort is refused rather than misread.
      expectError(await list(`tags.run=${prefix}&pageSize=2&sortField=size&nextToken=${page.meta.nextToken}`), 400, 'InvalidQuery')
    })
  })

  describe('updateFileMetadata', () => {
    it('merges metadata and tags (null removes), replaces accessPolicies, sets and clears expiresAt', async () => {
      const key = uniqueKey('upd')
      const file = await createFile(h, key, 'content', { tags: { a: '1', b: '2' }, metadata: { x: 1, y: { z: 2 } } })
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
      const res = await update(file.id, { metadata: { x: null, w: 'new' }, tags: { a: null, c: '3' }, accessPolicies: ['public_content'], expiresAt })
      expect(res.statusCode, res.body).toBe(200)
      const updated = res.json().file
      expect(updated).toMatchObject({ id: file.id, tags: { b: '2', c: '3' }, metadata: { y: { z: 2 }, w: 'new' }, accessPolicies: ['public_content'], status: 'upload_completed', size: 7 })
      expect(updated.tags).not.toHaveProperty('a')
      expect(updated.metadata).not.toHaveProperty('x')
      expect(updated.expiresAt).toBe(new Date(Math.floor(Date.parse(expiresAt) / 60_000) * 60_000).toISOString())
      expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(file.updatedAt as string))
      // Public files have a stable, unsigned url.
      expect(updated.url).toBe(`${h.config.publicUrl}/v1/files/content/${h.credentials.botId}/${file.id}`)

      const byKey = await update(key, { expiresAt: null, accessPolicies: [] })
      expect(byKey.json().file).not.toHaveProperty('expiresAt')
      expect(byKey.json().file.url).toContain('signature=')
      // An empty update changes nothing but is valid.
      expect((await update(key, {})).json().file).toMatchObject({ tags: { b: '2', c: '3' } })
    })

    it('validates the body (400) and 404s unknown files', async () => {
      const file = await createFile(h, uniqueKey(), 'x')
      for (const body of [{ tags: { a: 1 } }, { accessPolicies: ['x'] }, { expiresAt: 'soon' }, { key: 'rename' }, { metadata: 'str' }]) {
        expectError(await update(file.id, body), 400, 'InvalidPayload')
      }
      expectError(await update('missing-file', { tags: { a: 'b' } }), 404, 'ResourceNotFound')
    })
  })

  describe('deleteFile', () => {
    it('deletes by id or by key, returns {}, then 404; deleting again is 404', async () => {
      const a = await createFile(h, uniqueKey('del'), 'aaa')
      const b = await createFile(h, uniqueKey('del'), 'bbb')
      const byId = await remove(a.id)
      expect(byId.statusCode).toBe(200)
      expect(byId.json()).toEqual({})
      expectError(await get(a.id), 404, 'ResourceNotFound')
      const byKey = await remove(b.key)
      expect(byKey.json()).toEqual({})
      expectError(await get(b.key), 404, 'ResourceNotFound')
      expectError(await remove(b.key), 404, 'ResourceNotFound')
      // A DELETE without a body (curl) works too.
      const c = await createFile(h, uniqueKey('del'), 'ccc')
      const bare = await h.app.inject({ method: 'DELETE', url: `/v1/files/${c.id}`, headers: ownerHeaders(h) })
      expect(bare.statusCode).toBe(200)
    })

    it('a deleted key can be created again as a new file', async () => {
      const key = uniqueKey('again')
      const first = await createFile(h, key, 'one')
      await remove(key)
      const second = await createFile(h, key, 'two')
      expect(second.id).not.toBe(first.id)
    })
  })

  describe('expiry', () => {
    it('an expired file behaves as deleted: get, list, update, delete and its url are 404, and its key is free again', async () => {
      const key = uniqueKey('exp')
      const file = await createFile(h, key, 'short-lived', { tags: { exp: key } })
      // Move the expiry into the past behind the API's back (the API only accepts future dates).
      await h.store.db.updateTable('files').set({ expires_at: Date.now() - 1000 }).where('id', '=', file.id).execute()
      expect((await list(`tags.exp=${encodeURIComponent(key)}`)).json().files).toEqual([])
      expectError(await h.app.inject({ method: 'GET', url: new URL(file.url).pathname + new URL(file.url).search }), 404, 'ResourceNotFound')
      expectError(await update(key, { tags: { a: 'b' } }), 404, 'ResourceNotFound')
      expectError(await get(file.id), 404, 'ResourceNotFound')
      expectError(await remove(file.id), 404, 'ResourceNotFound')
      const again = await upsert(h, { key, size: 1 })
      expect(again.statusCode).toBe(200)
      expect(again.json().file.id).not.toBe(file.id)
    })
  })
})
