/**
 * Files API driven by the official @botpress/client@1.45.0 over real HTTP: uploadFile (upsert +
 * PUT to the signed uploadUrl without auth headers), getFile by id and key, downloads with plain
 * fetch, list.files paging and tag filters, updateFileMetadata, deleteFile by key, public and
 * private URLs, superseded upload URLs and the content size limit.
 */
import { request as httpRequest } from 'node:http'
import { Client, ForbiddenError, PayloadTooLargeError, ResourceNotFoundError, UnauthorizedError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { ALL_BYTES, accountWithRole, blobFiles } from '../api/files-helpers.js'

const uid = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`

async function fetchBytes(url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; bytes: Buffer; text: string }> {
  const res = await fetch(url, init)
  const bytes = Buffer.from(await res.arrayBuffer())
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') }
}

function expectErrorBody(res: { status: number; text: string }, status: number, type: string): void {
  expect(res.status, res.text).toBe(status)
  const body = JSON.parse(res.text) as Record<string, unknown>
  expect(body).toMatchObject({ code: status, type })
  expect(typeof body.id).toBe('string')
  expect(typeof body.message).toBe('string')
}

describe('e2e: Files API (official client)', () => {
  let h: Harness
  let client: Client

  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: h.credentials.botId })
  })
  afterAll(async () => h?.close())

  it('uploadFile with binary content (all 256 byte values) → getFile by id and by key → download with fetch', async () => {
    const key = uid('bytes') + '.bin'
    const { file } = await client.uploadFile({ key, content: ALL_BYTES, tags: { kind: 'binary' } })
    expect(file).toMatchObject({ key, size: 256, status: 'upload_pending', tags: { kind: 'binary' }, botId: h.credentials.botId })
    // The uploadUrl the client PUT to is absolute, on this server, and signed.
    expect(file.uploadUrl.startsWith(`${h.baseUrl}/v1/files/uploads/`)).toBe(true)

    const byId = (await client.getFile({ id: file.id })).file
    expect(byId).toMatchObject({ id: file.id, key, size: 256, status: 'upload_completed', contentType: 'application/octet-stream' })
    const byKey = (await client.getFile({ id: key })).file
    expect(byKey.id).toBe(file.id)

    const res = await fetchBytes(byId.url)
    expect(res.status).toBe(200)
    expect(Buffer.compare(res.bytes, ALL_BYTES)).toBe(0)
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toContain('sandbox')
  })

  it('uploadFile of 5 MB: the upload URL is not bound by the 1 MB JSON limit and streams to disk', async () => {
    const data = Buffer.alloc(5 * 1024 * 1024)
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i)
    const { file } = await client.uploadFile({ key: uid('large') + '.bin', content: data })
    const got = (await client.getFile({ id: file.id })).file
    expect(got.size).toBe(data.length)
    const res = await fetchBytes(got.url)
    expect(res.headers.get('content-length')).toBe(String(data.length))
    expect(Buffer.compare(res.bytes, data)).toBe(0)
  })

  it('uploadFile with a UTF-8 string and an explicit content type', async () => {
    const text = 'Grüße, 世界! 🎉 — "quotes" & <tags>\n'
    const key = uid('text') + '.txt'
    const { file } = await client.uploadFile({ key, content: text, contentType: 'text/plain; charset=utf-8', metadata: { lang: 'mixed' } })
    expect(file.size).toBe(Buffer.byteLength(text, 'utf8'))
    const got = (await client.getFile({ id: key })).file
    expect(got).toMatchObject({ contentType: 'text/plain; charset=utf-8', metadata: { lang: 'mixed' }, size: Buffer.byteLength(text) })
    const res = await fetchBytes(got.url)
    expect(res.text).toBe(text)
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
  })

  it('list.files pages through more than pageSize files with a tag filter, without skips or repeats', async () => {
    const run = uid('run')
    const ids = new Set<string>()
    for (let i = 0; i < 23; i++) {
      const { file } = await client.uploadFile({ key: `${run}/${i}.txt`, content: `file ${i}`, tags: { run, half: i < 10 ? 'first' : 'second' } })
      ids.add(file.id)
    }
    await client.uploadFile({ key: `${uid('other')}.txt`, content: 'not in the run', tags: { run: 'other' } })

    const all = await client.list.files({ tags: { run }, pageSize: 5 }).collect()
    expect(all).toHaveLength(23)
    expect(new Set(all.map((f) => f.id))).toEqual(ids)
    const byKey = await client.list.files({ tags: { run }, pageSize: 7, sortField: 'key', sortDirection: 'asc' }).collect()
    expect(byKey.map((f) => f.key)).toEqual([...byKey.map((f) => f.key)].sort())
    const first = await client.list.files({ tags: { run, half: 'first' } }).collect()
    expect(first).toHaveLength(10)

    // A single page and its token, as the raw operation returns them.
    const page = await client.listFiles({ tags: { run }, pageSize: 20 })
    expect(page.files).toHaveLength(20)
    expect(typeof page.meta.nextToken).toBe('string')
    const rest = await client.listFiles({ tags: { run }, pageSize: 20, nextToken: page.meta.nextToken })
    expect(rest.files).toHaveLength(3)
    expect(rest.meta.nextToken).toBeUndefined()
    // ids filter (repeated query keys).
    const some = [...ids].slice(0, 3)
    const picked = await client.listFiles({ ids: some })
    expect(picked.files.map((f) => f.id).sort()).toEqual([...some].sort())
  })

  it('updateFileMetadata merges tags and metadata; deleteFile by key; then getFile → ResourceNotFoundError', async () => {
    const key = uid('upd') + '.md'
    const { file } = await client.uploadFile({ key, content: '# title', tags: { a: '1', b: '2' }, metadata: { keep: true, drop: 1 } })
    expect(file.contentType).toBe('text/markdown')
    const { file: updated } = await client.updateFileMetadata({ id: file.id, tags: { a: null, c: '3' }, metadata: { drop: null, added: 'yes' } })
    expect(updated.tags).toEqual({ b: '2', c: '3' })
    expect(updated.metadata).toEqual({ keep: true, added: 'yes' })

    expect(await client.deleteFile({ id: key })).toEqual({})
    await expect(client.getFile({ id: key })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.getFile({ id: file.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.deleteFile({ id: key })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('public_content: the URL works without a signature and stays stable', async () => {
    const key = uid('public') + '.txt'
    const { file } = await client.uploadFile({ key, content: 'for everyone', accessPolicies: ['public_content'], publicContentImmediatelyAccessible: true })
    const first = (await client.getFile({ id: file.id })).file
    const second = (await client.getFile({ id: key })).file
    expect(first.url).toBe(second.url)
    expect(first.url).toBe(file.url)
    expect(new URL(first.url).search).toBe('')
    const res = await fetchBytes(first.url)
    expect(res.status).toBe(200)
    expect(res.text).toBe('for everyone')
  })

  it('private URL: a tampered or expired signature is refused with an error body', async () => {
    const { file } = await client.uploadFile({ key: uid('private') + '.txt', content: 'secret' })
    const url = new URL((await client.getFile({ id: file.id })).file.url)
    expect(url.searchParams.get('signature')).toBeTruthy()
    expect((await fetchBytes(url.toString())).text).toBe('secret')

    const tampered = new URL(url)
    const sig = tampered.searchParams.get('signature')!
    tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1))
    expectErrorBody(await fetchBytes(tampered.toString()), 403, 'Forbidden')

    const expired = new URL(url)
    expired.searchParams.set('expires', String(Math.floor(Date.now() / 1000) - 60))
    expectErrorBody(await fetchBytes(expired.toString()), 403, 'Forbidden')

    const unsigned = new URL(url.pathname, url)
    expectErrorBody(await fetchBytes(unsigned.toString()), 404, 'ResourceNotFound')
  })

  it('an upload URL reused after a re-upsert of the key is refused; the new one works', async () => {
    const key = uid('reuse') + '.txt'
    const { file: first } = await client.upsertFile({ key, size: 5 })
    const { file: second } = await client.upsertFile({ key, size: 5 })
    expect(second.id).toBe(first.id)
    const stale = await fetchBytes(first.uploadUrl, { method: 'PUT', body: 'stale', headers: { 'content-type': 'text/plain' } })
    expectErrorBody(stale, 403, 'Forbidden')
    const fresh = await fetchBytes(second.uploadUrl, { method: 'PUT', body: 'fresh', headers: { 'content-type': 'text/plain' } })
    expect(fresh.status).toBe(200)
    expect((await fetchBytes((await client.getFile({ id: key })).file.url)).text).toBe('fresh')
  })

  it('maps error types to the client\'s error classes', async () => {
    const stranger = new Client({ apiUrl: h.baseUrl, token: 'pat_not-a-real-token', botId: h.credentials.botId })
    await expect(stranger.listFiles({})).rejects.toBeInstanceOf(UnauthorizedError)
    const viewerless = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: 'no-such-bot' })
    await expect(viewerless.getFile({ id: 'x' })).rejects.toBeInstanceOf(UnauthorizedError)
    await expect(client.getFile({ id: uid('missing') })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const outsider = await accountWithRole(h, null)
    const foreign = new Client({ apiUrl: h.baseUrl, token: outsider.token, botId: h.credentials.botId })
    await expect(foreign.listFiles({})).rejects.toBeInstanceOf(ForbiddenError)
    const viewer = await accountWithRole(h, 'viewer')
    const readOnly = new Client({ apiUrl: h.baseUrl, token: viewer.token, botId: h.credentials.botId })
    await expect(readOnly.listFiles({})).resolves.toHaveProperty('files')
    await expect(readOnly.uploadFile({ key: uid('nope'), content: 'x' })).rejects.toBeInstanceOf(ForbiddenError)
  })
})

describe('e2e: Files API size limit (maxFileBytes = 1024, official client)', () => {
  let h: Harness
  let client: Client

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { maxFileBytes: 1024 } })
    client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: h.credentials.botId })
  })
  afterAll(async () => h?.close())

  it('uploadFile over the limit fails with PayloadTooLargeError at upsert; nothing is stored', async () => {
    await expect(client.uploadFile({ key: 'too-big.bin', content: Buffer.alloc(1025, 1) })).rejects.toBeInstanceOf(PayloadTooLargeError)
    await expect(client.getFile({ id: 'too-big.bin' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const { file } = await client.uploadFile({ key: 'just-right.bin', content: Buffer.alloc(1024, 2) })
    expect(file.size).toBe(1024)
  })

  it('a raw upload over the limit is 413 (Content-Length first, then while streaming); the file stays pending with no blob', async () => {
    const before = blobFiles(h)
    const { file } = await client.upsertFile({ key: 'liar.bin', size: 10 })
    const byLength = await fetchBytes(file.uploadUrl, { method: 'PUT', body: Buffer.alloc(2000, 3) })
    expectErrorBody(byLength, 413, 'PayloadTooLarge')

    // Chunked, no Content-Length: the server must stop at the limit, answer 413, not wait for the end.
    const streamed = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(file.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          req.destroy()
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') })
        })
      })
      req.on('error', reject)
      req.write(Buffer.alloc(1500, 4)) // over the limit, and the request is never ended by us
    })
    expectErrorBody(streamed, 413, 'PayloadTooLarge')

    const got = (await client.getFile({ id: file.id })).file
    expect(got).toMatchObject({ status: 'upload_pending', size: null })
    expect(blobFiles(h)).toEqual(before)
  })
})
