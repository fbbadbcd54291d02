/**
 * File content through app.inject: the signed upload URL (raw body, streaming limit, supersession),
 * the download URL (signed or public, headers that keep uploaded HTML inert), blob lifecycle on
 * disk (replace, delete, bot deletion).
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hmacSha256 } from '../../src/lib/crypto.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ALL_BYTES, blobFiles, createFile, download, expectError, ownerHeaders, pathOf, secondBot, uniqueKey, upload, upsert } from './files-helpers.js'

/** Signs like the server does, with its stored secret: lets tests build expired URLs. */
async function serverSecret(h: Harness): Promise<string> {
  // The server created it on its first upsert; an existing setting is never replaced.
  return h.store.getOrCreateSetting('url-signing-secret', () => 'unused')
}

describe('Files API: content', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  it('uploads raw bytes and downloads them unchanged (all 256 byte values), with safe headers', async () => {
    const file = await createFile(h, uniqueKey('bin').replace('.txt', '.bin'), ALL_BYTES)
    expect(file).toMatchObject({ status: 'upload_completed', size: 256, contentType: 'application/octet-stream' })
    const res = await download(h, file.url)
    expect(res.statusCode).toBe(200)
    expect(Buffer.compare(res.rawPayload, ALL_BYTES)).toBe(0)
    expect(res.headers['content-type']).toBe('application/octet-stream')
    expect(res.headers['content-length']).toBe('256')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(String(res.headers['content-security-policy'])).toMatch(/(^|;\s*)sandbox(;|$)/)
    // Not a type a browser displays: a download (src/http/untrusted-content.ts INLINE_TYPES).
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="bin-[0-9a-f]{8}\.bin"; filename\*=UTF-8''bin-[0-9a-f]{8}\.bin$/)
  })

  it('stores a UTF-8 string byte for byte and serves it with the declared content type', async () => {
    const text = 'héllo wörld ✓ 😀\n'
    const file = await createFile(h, uniqueKey('utf8'), text, { contentType: 'text/plain; charset=utf-8' })
    expect(file.size).toBe(Buffer.byteLength(text))
    const res = await download(h, file.url)
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(res.rawPayload.toString('utf8')).toBe(text)
  })

  it('takes the body raw whatever its Content-Type (JSON is not parsed), or with no Content-Type at all', async () => {
    const invalidJson = '{"not": json at all'
    const a = (await upsert(h, { key: uniqueKey('raw').replace('.txt', '.json'), size: invalidJson.length })).json().file
    expect(a.contentType).toBe('application/json')
    expect((await upload(h, a.uploadUrl, invalidJson, 'application/json')).statusCode).toBe(200)
    expect((await download(h, a.url)).body).toBe(invalidJson)

    const b = (await upsert(h, { key: uniqueKey('raw'), size: 3 })).json().file
    const res = await h.app.inject({ method: 'PUT', url: pathOf(b.uploadUrl), payload: Buffer.from('abc') })
    expect(res.statusCode, res.body).toBe(200)
    expect((await download(h, b.url)).body).toBe('abc')

    const multipart = (await upsert(h, { key: uniqueKey('raw'), size: 5 })).json().file
    expect((await upload(h, multipart.uploadUrl, 'a=b&c', 'application/x-www-form-urlencoded')).statusCode).toBe(200)
    expect((await download(h, multipart.url)).body).toBe('a=b&c')
  })

  it('uploads larger than the 1 MB JSON limit go through the upload URL', async () => {
    const data = Buffer.alloc(3 * 1024 * 1024 + 5, 0x5a)
    const file = await createFile(h, uniqueKey('big').replace('.txt', '.bin'), data)
    expect(file.size).toBe(data.length)
    expect((await download(h, file.url)).rawPayload.equals(data)).toBe(true)
  })

  it('accepts an empty upload for a zero-byte file', async () => {
    const file = (await upsert(h, { key: uniqueKey('empty'), size: 0 })).json().file
    const res = await upload(h, file.uploadUrl, Buffer.alloc(0))
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().file).toMatchObject({ id: file.id, size: 0, status: 'upload_completed' })
    const got = await download(h, file.url)
    expect(got.statusCode).toBe(200)
    expect(got.rawPayload.length).toBe(0)
  })

  it('the url of a pending file is 404 until the upload lands', async () => {
    const file = (await upsert(h, { key: uniqueKey('pending'), size: 3 })).json().file
    expectError(await download(h, file.url), 404, 'ResourceNotFound')
  })

  it('serves HTML and SVG inert: sandbox CSP, nosniff, never executed on our origin', async () => {
    const html = '<script>alert(document.cookie)</script>'
    const file = await createFile(h, uniqueKey('evil').replace('.txt', '.html'), html)
    expect(file.contentType).toBe('text/html')
    const res = await download(h, file.url)
    expect(res.headers['content-type']).toBe('text/html')
    expect(res.headers['content-security-policy']).toContain('sandbox')
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  describe('download URLs', () => {
    it('private: signed and expiring; tampered, foreign or expired signatures are 403, a missing one 404', async () => {
      const file = await createFile(h, uniqueKey('priv'), 'secret stuff')
      const other = await createFile(h, uniqueKey('priv'), 'other stuff')
      const url = new URL(file.url)
      const sig = url.searchParams.get('signature')!
      const expires = url.searchParams.get('expires')!
      expect(Number(expires) * 1000).toBeGreaterThan(Date.now())
      expect(Number(expires) * 1000).toBeLessThanOrEqual(Date.now() + h.config.signedUrlTtlSeconds * 1000 + 1000)

      const base = url.pathname
      const flipped = sig.slice(0, -2) + (sig.endsWith('AA') ? 'BB' : 'AA')
      expectError(await h.app.inject({ method: 'GET', url: `${base}?expires=${expires}&signature=${flipped}` }), 403, 'Forbidden')
      expectError(await h.app.inject({ method: 'GET', url: `${base}?expires=${Number(expires) + 3600}&signature=${sig}` }), 403, 'Forbidden')
      expectError(await h.app.inject({ method: 'GET', url: `${base}?expires=${expires}` }), 403, 'Forbidden')
      expectError(await h.app.inject({ method: 'GET', url: `${base}?signature=${sig}` }), 403, 'Forbidden')
      expectError(await h.app.inject({ method: 'GET', url: `${base}?expires=${expires}&signature=` }), 403, 'Forbidden')
      // Another file's signature does not open this file.
      const otherUrl = new URL(other.url)
      expectError(await h.app.inject({ method: 'GET', url: `${base}${otherUrl.search}` }), 403, 'Forbidden')
      // No signature at all: a private file is indistinguishable from a missing one.
      expectError(await h.app.inject({ method: 'GET', url: base }), 404, 'ResourceNotFound')

      // Correctly signed but expired.
      const secret = await serverSecret(h)
      const past = Math.floor(Date.now() / 1000) - 10
      const expiredSig = hmacSha256(secret, JSON.stringify(['download', h.credentials.botId, file.id, past])).toString('base64url')
      expectError(await h.app.inject({ method: 'GET', url: `${base}?expires=${past}&signature=${expiredSig}` }), 403, 'Forbidden')

      expect((await download(h, file.url)).body).toBe('secret stuff')
    })

    it('public_content: a stable unsigned URL that works without signature; made private again, it stops working', async () => {
      const file = await createFile(h, uniqueKey('pub'), 'hello public', { accessPolicies: ['public_content'] })
      expect(file.url).toBe(`${h.config.publicUrl}/v1/files/content/${h.credentials.botId}/${file.id}`)
      const again = await h.app.inject({ method: 'GET', url: `/v1/files/${file.id}`, headers: ownerHeaders(h) })
      expect(again.json().file.url).toBe(file.url)
      const res = await download(h, file.url)
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('hello public')
      expect(res.headers['cache-control']).toContain('public')

      // Re-uploading keeps the URL and serves the new content.
      const re = (await upsert(h, { key: file.key, size: 5, accessPolicies: ['public_content'] })).json().file
      expect(re.url).toBe(file.url)
      expectError(await download(h, file.url), 404)
      await upload(h, re.uploadUrl, 'v2!!!')
      expect((await download(h, file.url)).body).toBe('v2!!!')

      await h.app.inject({ method: 'PUT', url: `/v1/files/${file.id}`, headers: ownerHeaders(h), payload: { accessPolicies: [] } })
      expectError(await download(h, file.url), 404, 'ResourceNotFound')
    })

    it('a URL naming another bot than the file\'s is 404, signed or not', async () => {
      const other = await secondBot(h)
      const file = await createFile(h, uniqueKey('cross'), 'mine', { accessPolicies: ['public_content'] })
      expectError(await h.app.inject({ method: 'GET', url: `/v1/files/content/${other}/${file.id}` }), 404, 'ResourceNotFound')
    })
  })

  describe('upload URLs', () => {
    it('are refused when tampered with, expired, superseded by a re-upsert, or for a deleted file', async () => {
      const key = uniqueKey('up')
      const first = (await upsert(h, { key, size: 3 })).json().file
      const token = new URL(first.uploadUrl).pathname.split('/').pop()!
      const [payload, mac] = token.split('.') as [string, string]
      const forged = Buffer.from(JSON.stringify([h.credentials.botId, first.id, 'f'.repeat(32), 9_999_999_999])).toString('base64url')
      for (const bad of [`${payload}.${mac.slice(0, -2)}xx`, `${forged}.${mac}`, payload, `${payload}.${mac}.x`, 'garbage']) {
        expectError(await h.app.inject({ method: 'PUT', url: `/v1/files/uploads/${bad}`, payload: 'abc', headers: { 'content-type': 'text/plain' } }), 403, 'Forbidden')
      }

      // Correctly signed but expired.
      const secret = await serverSecret(h)
      const [botId, fileId, nonce] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as string[]
      const expiredPayload = Buffer.from(JSON.stringify([botId, fileId, nonce, Math.floor(Date.now() / 1000) - 5])).toString('base64url')
      const expiredMac = hmacSha256(secret, JSON.stringify(['upload', expiredPayload])).toString('base64url')
      expectError(await h.app.inject({ method: 'PUT', url: `/v1/files/uploads/${expiredPayload}.${expiredMac}`, payload: 'abc' }), 403, 'Forbidden')

      // A re-upsert supersedes the first URL; the new one works.
      const second = (await upsert(h, { key, size: 3 })).json().file
      expectError(await upload(h, first.uploadUrl, 'abc'), 403, 'Forbidden')
      expect((await upload(h, second.uploadUrl, 'xyz')).statusCode).toBe(200)
      // An upload URL works once (issue #24): a second PUT is 410 and the first content stays.
      expectError(await upload(h, second.uploadUrl, 'XYZ'), 410, 'ResourceGone')
      expect((await download(h, second.url)).body).toBe('xyz')

      await h.app.inject({ method: 'DELETE', url: `/v1/files/${second.id}`, headers: ownerHeaders(h) })
      expectError(await upload(h, second.uploadUrl, 'abc'), 404, 'ResourceNotFound')
    })

    it('a re-upsert keeps the old content until the new upload lands, then replaces it and deletes the old blob', async () => {
      const key = uniqueKey('swap')
      const v1 = await createFile(h, key, 'version one')
      const blobsBefore = blobFiles(h)
      const pending = (await upsert(h, { key, size: 11 })).json().file
      expect(blobFiles(h)).toEqual(blobsBefore)
      await upload(h, pending.uploadUrl, 'version two')
      const blobsAfter = blobFiles(h)
      expect(blobsAfter).toHaveLength(blobsBefore.length)
      expect(blobsAfter).not.toEqual(blobsBefore)
      expect((await download(h, v1.url)).body).toBe('version two')
    })

    it('deleting a file deletes its blob', async () => {
      const file = await createFile(h, uniqueKey('gone'), 'bye')
      const before = blobFiles(h).length
      await h.app.inject({ method: 'DELETE', url: `/v1/files/${file.id}`, headers: ownerHeaders(h) })
      expect(blobFiles(h).length).toBe(before - 1)
    })

    it('deleting a bot deletes its files\' blobs from disk', async () => {
      const botId = await secondBot(h)
      const headers = ownerHeaders(h, { 'x-bot-id': botId })
      const before = blobFiles(h)
      for (let i = 0; i < 3; i++) await createFile(h, `bot-file-${i}.bin`, Buffer.alloc(100, i), {}, headers)
      // A pending file (no blob yet) and a re-upserted one (old blob still referenced).
      await upsert(h, { key: 'pending.bin', size: 4 }, headers)
      await upsert(h, { key: 'bot-file-0.bin', size: 4 }, headers)
      expect(blobFiles(h).length).toBe(before.length + 3)
      await h.app.services.botRemoval.deleteBot(h.credentials.workspaceId, botId)
      expect(blobFiles(h)).toEqual(before)
      expectError(await h.app.inject({ method: 'GET', url: '/v1/files', headers }), 401, 'Unauthorized')
    })
  })
})

describe('Files API: content size limit (maxFileBytes = 1024)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ config: { maxFileBytes: 1024 } })
  })
  afterAll(async () => h?.close())

  it('refuses an upsert declaring more than the limit', async () => {
    expectError(await upsert(h, { key: 'big.bin', size: 1025 }), 413, 'PayloadTooLarge')
  })

  it('refuses an upload over the limit by Content-Length (413); the file stays pending with no blob', async () => {
    const file = (await upsert(h, { key: uniqueKey('cl'), size: 1024 })).json().file
    const res = await upload(h, file.uploadUrl, Buffer.alloc(1025, 1))
    expectError(res, 413, 'PayloadTooLarge')
    const got = (await h.app.inject({ method: 'GET', url: `/v1/files/${file.id}`, headers: ownerHeaders(h) })).json().file
    expect(got).toMatchObject({ status: 'upload_pending', size: null })
    expect(blobFiles(h)).toEqual([])
    expect(h.app.services.files.blobs).toBeDefined()
  })

  it('refuses a chunked upload (no Content-Length) as soon as it passes the limit; nothing is left behind', async () => {
    const file = (await upsert(h, { key: uniqueKey('chunked'), size: 1024 })).json().file
    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(100, 7))
    const res = await h.app.inject({
      method: 'PUT',
      url: pathOf(file.uploadUrl),
      headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
      payload: Readable.from(chunks),
    })
    expectError(res, 413, 'PayloadTooLarge')
    // The rest of the body is read and discarded (bounded) so the client can read the 413 (issue #13).
    expect(res.headers.connection).not.toBe('close')
    expect(blobFiles(h)).toEqual([])
    const tmp = (await import('node:fs')).readdirSync(`${h.dataDir}/blobs/tmp`)
    expect(tmp).toEqual([])
    const got = (await h.app.inject({ method: 'GET', url: `/v1/files/${file.id}`, headers: ownerHeaders(h) })).json().file
    expect(got.status).toBe('upload_pending')
  })

  it('accepts exactly the limit', async () => {
    const file = await createFile(h, uniqueKey('max'), Buffer.alloc(1024, 9))
    expect(file.size).toBe(1024)
    expect(blobFiles(h)).toHaveLength(1)
  })
})
