/**
 * copyFile (`POST /v1/files/{idOrKey}/{destinationKey}`) driven by the official @botpress/client over real
 * HTTP: content, tags, metadata and passages are copied (through the local disk, or PostgreSQL's blob store on
 * the postgres project), `overwrite` and its 409, another bot of the workspace via x-destination-bot-id, and
 * hostile input (other bots, other workspaces, roles, keys that look like paths, NUL bytes).
 */
import { randomUUID } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import {
  AlreadyExistsError, Client, ForbiddenError, InvalidPayloadError, InvalidQueryError, ResourceNotFoundError,
} from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalBlobStore } from '../../src/blobs/local.js'
import { PostgresBlobStore } from '../../src/blobs/postgres.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ALL_BYTES, accountWithRole, blobFiles, botApiKey, expectError, ownerHeaders, secondBot } from './files-helpers.js'

const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`

describe('Files API: copyFile', () => {
  let h: Harness
  let client: Client
  const clientFor = (token: string, botId = h.credentials.botId) => new Client({ apiUrl: h.baseUrl, token, botId })
  const bytesOf = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer())
  /** A POST with the path sent exactly as given (fetch and the client resolve dot segments first). */
  const rawPost = (path: string, headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { hostname, port } = new URL(h.baseUrl)
    const req = httpRequest({ hostname, port, path, method: 'POST', headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => { body += chunk.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end('{}')
  })

  beforeAll(async () => {
    h = await startParley({ listen: true, blobs: 'postgres' })
    client = clientFor(h.credentials.token)
  })
  afterAll(async () => h?.close())

  it('uses the blob store of the engine under test', () => {
    expect(h.app.services.files.blobs).toBeInstanceOf(h.storeKind === 'postgres' ? PostgresBlobStore : LocalBlobStore)
  })

  it('copies the bytes, content type, tags, metadata and access policies to a new file; the source stays', async () => {
    const key = `${uid('src')}.bin`
    const { file: source } = await client.uploadFile({
      key, content: ALL_BYTES, contentType: 'application/x-custom', tags: { kind: 'raw', team: 'a' }, metadata: { n: 1, deep: { ok: true } },
      accessPolicies: ['integrations'], expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    })
    const blobsBefore = h.storeKind === 'sqlite' ? blobFiles(h).length : 0
    const destinationKey = `copies/${uid('dst')} ü.bin`
    const { file: copy } = await client.copyFile({ idOrKey: key, destinationKey })
    expect(copy).toMatchObject({
      botId: h.credentials.botId, key: destinationKey, size: 256, contentType: 'application/x-custom', tags: { kind: 'raw', team: 'a' },
      metadata: { n: 1, deep: { ok: true } }, accessPolicies: ['integrations'], index: false, status: 'upload_completed', owner: { type: 'user' },
    })
    expect(copy.id).not.toBe(source.id)
    expect(copy.expiresAt).toBeUndefined() // a copy does not inherit the expiry
    expect(Buffer.compare(await bytesOf(copy.url), ALL_BYTES)).toBe(0)
    expect((await client.getFile({ id: destinationKey })).file.id).toBe(copy.id)
    // The source is untouched and has its own blob.
    const after = (await client.getFile({ id: source.id })).file
    expect(after).toMatchObject({ key, size: 256, status: 'upload_completed' })
    expect(Buffer.compare(await bytesOf(after.url), ALL_BYTES)).toBe(0)
    if (h.storeKind === 'sqlite') expect(blobFiles(h).length).toBe(blobsBefore + 1)
    // Deleting the copy leaves the source's content.
    await client.deleteFile({ id: copy.id })
    expect(Buffer.compare(await bytesOf(after.url), ALL_BYTES)).toBe(0)
  })

  it('copies by id; public_content copies get a stable public URL', async () => {
    const { file: source } = await client.uploadFile({ key: `${uid('pub')}.txt`, content: 'public words', accessPolicies: ['public_content'] })
    const { file: copy } = await client.copyFile({ idOrKey: source.id, destinationKey: uid('pub-copy') })
    expect(copy.url).not.toContain('signature=')
    expect((await bytesOf(copy.url)).toString()).toBe('public words')
  })

  it('an existing destination key is 409 AlreadyExists; overwrite replaces it (new id, new content, old blob gone)', async () => {
    const { file: source } = await client.uploadFile({ key: `${uid('v2')}.txt`, content: 'version two' })
    const target = `${uid('target')}.txt`
    const { file: old } = await client.uploadFile({ key: target, content: 'version one', tags: { old: 'yes' } })
    const blobsBefore = h.storeKind === 'sqlite' ? blobFiles(h) : []
    await expect(client.copyFile({ idOrKey: source.id, destinationKey: target })).rejects.toBeInstanceOf(AlreadyExistsError)
    await expect(client.copyFile({ idOrKey: source.id, destinationKey: target, overwrite: false })).rejects.toBeInstanceOf(AlreadyExistsError)
    expect((await client.getFile({ id: target })).file.id).toBe(old.id)
    if (h.storeKind === 'sqlite') expect(blobFiles(h)).toEqual(blobsBefore) // a refused copy leaves no blob

    const { file: copy } = await client.copyFile({ idOrKey: source.id, destinationKey: target, overwrite: true })
    expect(copy.id).not.toBe(old.id)
    expect(copy.tags).toEqual({})
    await expect(client.getFile({ id: old.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    expect((await bytesOf((await client.getFile({ id: target })).file.url)).toString()).toBe('version two')
    if (h.storeKind === 'sqlite') expect(blobFiles(h).length).toBe(blobsBefore.length) // one blob in, the replaced one out
    // Copying a file onto its own key is refused, with or without overwrite.
    await expect(client.copyFile({ idOrKey: source.id, destinationKey: source.key, overwrite: true })).rejects.toBeInstanceOf(InvalidPayloadError)
  })

  it('an expired file holding the destination key counts as absent', async () => {
    const { file: source } = await client.uploadFile({ key: `${uid('fresh')}.txt`, content: 'fresh' })
    const target = `${uid('stale')}.txt`
    const { file: stale } = await client.uploadFile({ key: target, content: 'stale' })
    await h.store.files.updateFile(h.credentials.botId, stale.id, { expiresAt: Date.now() - 1000 }, Date.now())
    const { file: copy } = await client.copyFile({ idOrKey: source.id, destinationKey: target })
    expect(copy.id).not.toBe(stale.id)
    expect((await bytesOf(copy.url)).toString()).toBe('fresh')
  })

  it('an indexed source: the copy is searchable at once with the same passages, caller-given ones included', async () => {
    const { file: source } = await client.uploadFile({ key: `${uid('kb')}.md`, content: '# Wombats\n\nWombats dig burrows with their claws.', index: true })
    await h.app.services.files.knowledge.idle()
    const { file: copy } = await client.copyFile({ idOrKey: source.id, destinationKey: `${uid('kb-copy')}.md` })
    expect(copy).toMatchObject({ index: true, status: 'indexing_completed' })
    const passages = async (id: string) => (await client.listFilePassages({ id })).passages.map((p) => [p.content, p.meta])
    expect(await passages(copy.id)).toEqual(await passages(source.id))
    const hits = (await client.searchFiles({ query: 'wombat burrows' })).passages.map((p) => p.file.id)
    expect(hits).toEqual(expect.arrayContaining([source.id, copy.id]))

    // Passages set by the caller travel with the copy (not re-extracted from the bytes).
    await client.setFilePassages({ id: source.id, passages: [{ content: 'Echidnas lay eggs.', type: 'paragraph', pageNumber: 2 }] })
    const { file: second } = await client.copyFile({ idOrKey: source.id, destinationKey: `${uid('kb-copy2')}.md` })
    expect(await passages(second.id)).toEqual([['Echidnas lay eggs.', { type: 'chunk', subtype: 'paragraph', pageNumber: 2, position: 0 }]])
  })

  it('an indexed source that has not finished indexing: the copy is indexed from its own bytes', async () => {
    const { file: source } = await client.uploadFile({ key: `${uid('pending')}.txt`, content: 'Platypus facts.', index: true })
    // Caught before the indexer finishes, or not: either way the copy ends up indexed.
    const { file: copy } = await client.copyFile({ idOrKey: source.id, destinationKey: `${uid('pending-copy')}.txt` })
    expect(copy.index).toBe(true)
    await h.app.services.files.knowledge.idle()
    expect((await client.getFile({ id: copy.id })).file.status).toBe('indexing_completed')
    expect((await client.listFilePassages({ id: copy.id })).passages.map((p) => p.content)).toEqual(['Platypus facts.'])
  })

  it('copies to another bot of the workspace with x-destination-bot-id (content, tags and search there)', async () => {
    const other = await secondBot(h)
    const { file: source } = await client.uploadFile({ key: `${uid('x')}.txt`, content: 'Quolls hunt at night.', tags: { t: '1' }, index: true })
    await h.app.services.files.knowledge.idle()
    const destinationKey = uid('in-other-bot')
    const { file: copy } = await client.copyFile({ idOrKey: source.key, destinationKey, 'x-destination-bot-id': other })
    expect(copy).toMatchObject({ botId: other, key: destinationKey, tags: { t: '1' }, status: 'indexing_completed' })
    const there = clientFor(h.credentials.token, other)
    expect((await there.getFile({ id: destinationKey })).file.id).toBe(copy.id)
    expect((await bytesOf(copy.url)).toString()).toBe('Quolls hunt at night.')
    expect((await there.searchFiles({ query: 'quols' })).passages.map((p) => p.file.id)).toEqual([copy.id]) // the vocabulary came along
    // Not in the source bot.
    await expect(client.getFile({ id: destinationKey })).rejects.toBeInstanceOf(ResourceNotFoundError)
    // The destination's key space: 409 there too, and the destination header equal to x-bot-id is the same bot.
    await expect(client.copyFile({ idOrKey: source.id, destinationKey, 'x-destination-bot-id': other })).rejects.toBeInstanceOf(AlreadyExistsError)
    const same = await client.copyFile({ idOrKey: source.id, destinationKey: uid('same'), 'x-destination-bot-id': h.credentials.botId })
    expect(same.file.botId).toBe(h.credentials.botId)
  })

  describe('refused', () => {
    let source: { id: string; key: string }
    beforeAll(async () => {
      ;({ file: source } = await client.uploadFile({ key: `${uid('guarded')}.txt`, content: 'guarded' }))
    })

    it('another bot\'s file, an unknown file, or a file whose upload has not landed', async () => {
      const other = await secondBot(h)
      const foreign = clientFor(h.credentials.token, other)
      await expect(foreign.copyFile({ idOrKey: source.id, destinationKey: uid('steal') })).rejects.toBeInstanceOf(ResourceNotFoundError)
      await expect(foreign.copyFile({ idOrKey: source.key, destinationKey: uid('steal') })).rejects.toBeInstanceOf(ResourceNotFoundError)
      // Even when the caller names its own bot as destination and the other one as x-bot-id: the source is looked up in x-bot-id.
      await expect(foreign.copyFile({ idOrKey: source.id, destinationKey: uid('steal'), 'x-destination-bot-id': h.credentials.botId })).rejects.toBeInstanceOf(ResourceNotFoundError)
      await expect(client.copyFile({ idOrKey: uid('missing'), destinationKey: uid('d') })).rejects.toBeInstanceOf(ResourceNotFoundError)
      const { file: pending } = await client.upsertFile({ key: uid('pending'), size: 3 })
      await expect(client.copyFile({ idOrKey: pending.id, destinationKey: uid('d') })).rejects.toBeInstanceOf(InvalidPayloadError)
    })

    it('a destination bot of another workspace or unknown is 404, even for a member of both workspaces', async () => {
      const principal = await h.app.services.auth.authenticate(`Bearer ${h.credentials.token}`)
      if (principal.kind !== 'account') throw new Error('expected an account')
      const { workspace } = await h.app.services.workspaces.createWorkspace(principal.account, 'Elsewhere')
      const elsewhere = await secondBot(h, workspace.id)
      // The owner may use that bot directly…
      expect((await clientFor(h.credentials.token, elsewhere).listFiles({})).files).toEqual([])
      // …but not as a copy destination from this workspace.
      await expect(client.copyFile({ idOrKey: source.id, destinationKey: uid('d'), 'x-destination-bot-id': elsewhere })).rejects.toBeInstanceOf(ResourceNotFoundError)
      await expect(client.copyFile({ idOrKey: source.id, destinationKey: uid('d'), 'x-destination-bot-id': uid('nobot') })).rejects.toBeInstanceOf(ResourceNotFoundError)
      expect((await clientFor(h.credentials.token, elsewhere).listFiles({})).files).toEqual([])
    })

    it('a bot API key copies within its bot only, and overwrites only files its bot created', async () => {
      const key = await botApiKey(h, h.credentials.botId)
      const asBot = clientFor(key)
      const other = await secondBot(h)
      await expect(asBot.copyFile({ idOrKey: source.id, destinationKey: uid('d'), 'x-destination-bot-id': other })).rejects.toBeInstanceOf(ForbiddenError)
      const { file: mine } = await asBot.copyFile({ idOrKey: source.id, destinationKey: uid('by-bot') })
      expect(mine.owner).toEqual({ type: 'bot', id: h.credentials.botId })
      expect((await asBot.copyFile({ idOrKey: source.id, destinationKey: mine.key, overwrite: true })).file.owner.type).toBe('bot')
      // source was uploaded with the owner's PAT: a user's file.
      const { file: users } = await client.uploadFile({ key: uid('users'), content: 'u' })
      await expect(asBot.copyFile({ idOrKey: source.id, destinationKey: users.key, overwrite: true })).rejects.toBeInstanceOf(ForbiddenError)
      expect((await client.getFile({ id: users.key })).file.id).toBe(users.id)
    })

    it('viewers and outsiders: 403', async () => {
      const viewer = await accountWithRole(h, 'viewer')
      await expect(clientFor(viewer.token).copyFile({ idOrKey: source.id, destinationKey: uid('d') })).rejects.toBeInstanceOf(ForbiddenError)
      const outsider = await accountWithRole(h, null)
      await expect(clientFor(outsider.token).copyFile({ idOrKey: source.id, destinationKey: uid('d') })).rejects.toBeInstanceOf(ForbiddenError)
    })

    it('keys that look like paths are opaque keys: nothing is written outside the blob store', async () => {
      const before = h.storeKind === 'sqlite' ? blobFiles(h).length : 0
      for (const destinationKey of ['../x', '../../etc/passwd', '/abs/path', 'a\\..\\b', '%2e%2e', '..%2F..']) {
        const { file } = await client.copyFile({ idOrKey: source.id, destinationKey })
        expect(file.key).toBe(destinationKey)
        expect((await client.getFile({ id: destinationKey })).file.id).toBe(file.id)
      }
      if (h.storeKind === 'sqlite') {
        const blobs = blobFiles(h)
        expect(blobs.length).toBe(before + 6)
        for (const path of blobs) expect(path).toMatch(/^blobs\/[0-9a-f]{2}\/[0-9a-f]{32}$/)
      }
      // Dot segments sent raw (the client's URL handling would resolve them) reach the route as a key too.
      const raw = await rawPost(`/v1/files/${source.id}/..`, ownerHeaders(h))
      expect(raw.status, raw.body).toBe(200)
      expect(JSON.parse(raw.body).file.key).toBe('..')
    })

    it('NUL bytes, control characters, lone surrogates and over-long keys are 400; so are bad bodies and headers', async () => {
      await expect(client.copyFile({ idOrKey: source.id, destinationKey: 'a\u0000b' })).rejects.toBeInstanceOf(InvalidQueryError)
      await expect(client.copyFile({ idOrKey: 'a\u0000b', destinationKey: uid('d') })).rejects.toBeInstanceOf(InvalidQueryError)
      await expect(client.copyFile({ idOrKey: source.id, destinationKey: 'line\nbreak' })).rejects.toBeInstanceOf(InvalidPayloadError)
      await expect(client.copyFile({ idOrKey: source.id, destinationKey: 'k'.repeat(1025) })).rejects.toBeInstanceOf(InvalidPayloadError)
      const post = (url: string, payload: unknown, headers = ownerHeaders(h)) =>
        h.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
      expectError(await post(`/v1/files/${source.id}/%ED%A0%80`, {}), 400)
      expectError(await post(`/v1/files/${source.id}/${uid('d')}`, { overwrite: 'yes' }), 400, 'InvalidPayload')
      expectError(await post(`/v1/files/${source.id}/${uid('d')}`, { overwrite: true, extra: 1 }), 400, 'InvalidPayload')
      expectError(await post(`/v1/files/${source.id}/${uid('d')}`, {}, ownerHeaders(h, { 'x-destination-bot-id': 'a\u0000b' })), 400)
      expectError(await post(`/v1/files/${source.id}/${uid('d')}`, {}, ownerHeaders(h, { 'x-destination-bot-id': '' })), 400, 'InvalidPayload')
      expectError(await post(`/v1/files/${source.id}/${uid('d')}`, {}, ownerHeaders(h, { 'x-destination-bot-id': 'b'.repeat(201) })), 400, 'InvalidPayload')
      // Without credentials nothing is copied.
      expectError(await post(`/v1/files/${source.id}/${uid('d')}`, {}, { 'x-bot-id': h.credentials.botId }), 401, 'Unauthorized')
    })
  })

  it('is documented in /openapi.json with the destination header', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId: string; parameters?: { name: string; in: string }[] }>>
    }
    const op = doc.paths['/v1/files/{idOrKey}/{destinationKey}']?.post
    expect(op?.operationId).toBe('copyFile')
    expect(op?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'x-destination-bot-id', in: 'header' })]))
    expect(doc.paths['/v1/files/{id}/passages']?.put?.operationId).toBe('setFilePassages')
    expect(doc.paths['/v1/files/tags']?.get?.operationId).toBe('listFileTags')
    expect(doc.paths['/v1/files/tags/{tag}/values']?.get?.operationId).toBe('listFileTagValues')
  })
})
