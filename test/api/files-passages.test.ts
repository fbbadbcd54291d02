/**
 * setFilePassages (`PUT /v1/files/{id}/passages`) driven by the official @botpress/client over real HTTP: the
 * caller's passages replace the index's for the file (document order, types, page numbers, headings), search and
 * listFilePassages see them at once, the file becomes indexing_completed; limits, other bots, roles, files whose
 * upload has not landed and files the indexer holds are refused.
 */
import { randomUUID } from 'node:crypto'
import { Client, ForbiddenError, InvalidPayloadError, ResourceLockedConflictError, ResourceNotFoundError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_PASSAGE_CHARS, MAX_SET_PASSAGES } from '../../src/domain/knowledge/knowledge-service.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { accountWithRole, botApiKey, expectError, ownerHeaders, secondBot } from './files-helpers.js'

const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`

describe('Files API: setFilePassages', () => {
  let h: Harness
  let client: Client
  const clientFor = (token: string, botId = h.credentials.botId) => new Client({ apiUrl: h.baseUrl, token, botId })
  const listed = async (id: string) => (await client.listFilePassages({ id })).passages.map((p) => ({ content: p.content, meta: p.meta }))
  const found = async (query: string) => (await client.searchFiles({ query })).passages.map((p) => [p.file.id, p.content])

  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = clientFor(h.credentials.token)
  })
  afterAll(async () => h?.close())

  it('replaces the passages of an uploaded file: listed in order, searchable at once, file indexing_completed', async () => {
    const { file } = await client.uploadFile({ key: `guides/${uid('guide')}.pdf`, content: 'the bytes are not read' })
    expect((await client.getFile({ id: file.id })).file.status).toBe('upload_completed')
    await client.setFilePassages({
      id: file.id,
      passages: [
        { content: '# Sloths', type: 'title' },
        { content: 'Sloths sleep fifteen hours a day.', type: 'paragraph', pageNumber: 1 },
        { content: 'Diet', type: 'subtitle', pageNumber: 2 },
        { content: '- leaves\n- buds', type: 'list', pageNumber: 2 },
        { content: '![a sloth](sloth.png)', type: 'image' },
        { content: 'no type at all' },
      ],
    })
    expect((await client.getFile({ id: file.id })).file).toMatchObject({ status: 'indexing_completed' })
    expect(await listed(file.id)).toEqual([
      { content: '# Sloths', meta: { type: 'chunk', subtype: 'title', position: 0 } },
      { content: 'Sloths sleep fifteen hours a day.', meta: { type: 'chunk', subtype: 'paragraph', pageNumber: 1, position: 1 } },
      { content: 'Diet', meta: { type: 'chunk', subtype: 'subtitle', pageNumber: 2, position: 2 } },
      { content: '- leaves\n- buds', meta: { type: 'chunk', subtype: 'list', pageNumber: 2, position: 3 } },
      { content: '![a sloth](sloth.png)', meta: { type: 'chunk', subtype: 'image', position: 4 } },
      { content: 'no type at all', meta: { type: 'chunk', position: 5 } },
    ])
    expect(await found('sloths sleep')).toContainEqual([file.id, 'Sloths sleep fifteen hours a day.'])
    // Headings weigh in: "diet" finds the list under the "Diet" subtitle.
    expect((await found('diet')).map(([, content]) => content)).toContain('- leaves\n- buds')
    // The words joined the bot's vocabulary (typo tolerance).
    expect(await found('slepe')).toContainEqual([file.id, 'Sloths sleep fifteen hours a day.'])

    // A second call replaces everything; by key works too; an empty list clears.
    await client.setFilePassages({ id: file.key, passages: [{ content: 'Anteaters have long tongues.' }] })
    expect((await listed(file.id)).map((p) => p.content)).toEqual(['Anteaters have long tongues.'])
    expect(await found('sloths')).toEqual([])
    await client.setFilePassages({ id: file.id, passages: [] })
    expect(await listed(file.id)).toEqual([])
    expect(await found('anteaters')).toEqual([])
    expect((await client.getFile({ id: file.id })).file.status).toBe('indexing_completed')
  })

  it('replaces what the indexer extracted; a re-upload brings the extracted passages back', async () => {
    const key = `${uid('indexed')}.md`
    const { file } = await client.uploadFile({ key, content: 'Extracted about manatees.', index: true })
    await h.app.services.files.knowledge.idle()
    expect((await listed(file.id)).map((p) => p.content)).toEqual(['Extracted about manatees.'])
    await client.setFilePassages({ id: file.id, passages: [{ content: 'Given about dugongs.' }] })
    expect((await listed(file.id)).map((p) => p.content)).toEqual(['Given about dugongs.'])
    expect(await found('manatees')).toEqual([])
    await client.uploadFile({ key, content: 'Extracted again about manatees.', index: true })
    await h.app.services.files.knowledge.idle()
    expect((await listed(file.id)).map((p) => p.content)).toEqual(['Extracted again about manatees.'])
  })

  it('a file the indexer holds is 409 ResourceLockedConflict until it lets go', async () => {
    const { file } = await client.uploadFile({ key: uid('held'), content: 'x' })
    const { blobName } = (await h.store.files.getFile(h.credentials.botId, file.id))!
    expect(await h.store.knowledge.claimIndexing(file.id, blobName!, 'another-instance', Date.now(), 0)).toBe(true)
    await expect(client.setFilePassages({ id: file.id, passages: [{ content: 'late' }] })).rejects.toBeInstanceOf(ResourceLockedConflictError)
    expect(await listed(file.id)).toEqual([])
    await h.store.knowledge.releaseIndexing(file.id, 'another-instance')
    await client.setFilePassages({ id: file.id, passages: [{ content: 'now' }] })
    expect((await listed(file.id)).map((p) => p.content)).toEqual(['now'])
    // The claim was released: the indexer can take the file again.
    expect(await h.store.knowledge.claimIndexing(file.id, blobName!, 'another-instance', Date.now(), 0)).toBe(true)
    await h.store.knowledge.releaseIndexing(file.id, 'another-instance')
  })

  it('other bots, unknown files, viewers and files without content are refused', async () => {
    const { file } = await client.uploadFile({ key: uid('mine'), content: 'mine' })
    const other = await secondBot(h)
    const passages = [{ content: 'injected' }]
    await expect(clientFor(h.credentials.token, other).setFilePassages({ id: file.id, passages })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(clientFor(await botApiKey(h, other), other).setFilePassages({ id: file.id, passages })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(clientFor(await botApiKey(h, other), h.credentials.botId).setFilePassages({ id: file.id, passages })).rejects.toBeInstanceOf(ForbiddenError)
    await expect(client.setFilePassages({ id: uid('missing'), passages })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const viewer = await accountWithRole(h, 'viewer')
    await expect(clientFor(viewer.token).setFilePassages({ id: file.id, passages })).rejects.toBeInstanceOf(ForbiddenError)
    expect((await clientFor(viewer.token).listFilePassages({ id: file.id })).passages).toEqual([]) // reading is allowed
    const { file: pending } = await client.upsertFile({ key: uid('pending'), size: 4 })
    await expect(client.setFilePassages({ id: pending.id, passages })).rejects.toBeInstanceOf(InvalidPayloadError)
    expect((await client.getFile({ id: pending.id })).file.status).toBe('upload_pending')
    expect((await client.getFile({ id: file.id })).file.status).toBe('upload_completed')
  })

  it(`validates the body: at most ${MAX_SET_PASSAGES} passages of 1 to ${MAX_PASSAGE_CHARS} characters, known types, integer page numbers`, async () => {
    const { file } = await client.uploadFile({ key: uid('limits'), content: 'limits' })
    const put = (payload: unknown) => h.app.inject({
      method: 'PUT', url: `/v1/files/${file.id}/passages`, headers: { ...ownerHeaders(h), 'content-type': 'application/json' }, payload: JSON.stringify(payload),
    })
    const bad: unknown[] = [
      {}, { passages: 'text' }, { passages: [{}] }, { passages: [{ content: '' }] }, { passages: [{ content: ' \n\t ' }] },
      { passages: [{ content: 'x'.repeat(MAX_PASSAGE_CHARS + 1) }] }, { passages: [{ content: 42 }] },
      { passages: [{ content: 'a', type: 'heading' }] }, { passages: [{ content: 'a', pageNumber: -1 }] }, { passages: [{ content: 'a', pageNumber: 1.5 }] },
      { passages: [{ content: 'a', pageNumber: '1' }] }, { passages: [{ content: 'a', extra: true }] }, { passages: [], extra: true },
      { passages: Array.from({ length: MAX_SET_PASSAGES + 1 }, () => ({ content: 'p' })) },
    ]
    for (const payload of bad) expectError(await put(payload), 400, 'InvalidPayload')
    // NUL and lone surrogates never reach the index (PostgreSQL could not store them).
    for (const raw of ['{"passages":[{"content":"a\\u0000b"}]}', '{"passages":[{"content":"a\\ud800b"}]}']) {
      expectError(await h.app.inject({ method: 'PUT', url: `/v1/files/${file.id}/passages`, headers: { ...ownerHeaders(h), 'content-type': 'application/json' }, payload: raw }), 400, 'InvalidPayload')
    }
    // Over the Files API's 1 MB body limit: 413.
    expectError(await put({ passages: Array.from({ length: 200 }, () => ({ content: 'y'.repeat(MAX_PASSAGE_CHARS) })) }), 413, 'PayloadTooLarge')
    expect(await listed(file.id)).toEqual([])
    expect((await client.getFile({ id: file.id })).file.status).toBe('upload_completed')
    // The limits themselves are accepted.
    const most = Array.from({ length: MAX_SET_PASSAGES }, (_, i) => ({ content: `passage ${i}`, pageNumber: i }))
    expect((await put({ passages: most })).statusCode).toBe(200)
    expect((await put({ passages: [{ content: 'z'.repeat(MAX_PASSAGE_CHARS) }] })).statusCode).toBe(200)
  })
})
