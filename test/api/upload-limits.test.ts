/**
 * Upload limits (issue #24, item 9): the size declared to upsertFile (or to a webchat createFileUpload) bounds the
 * upload, an upload URL works once, and uploads have quotas: per webchat user, files and bytes per window (429
 * RateLimited), per bot, bytes stored (403 QuotaExceeded). Through the Files API and the webchat path, on both engines.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { handoffFixture } from '../helpers/handoffs.js'
import { chatUserKey, newChatBot, type RaceBot } from '../helpers/races.js'
import { blobFiles, download, expectError, ownerHeaders, pathOf, uniqueKey, upload, upsert } from './files-helpers.js'

interface Upload { id: string; uploadUrl: string; url: string }

const webchatUpload = (h: Harness, bot: RaceBot, key: string, size: number) =>
  h.app.inject({ method: 'POST', url: `/${bot.webhookId}/files`, headers: { 'x-user-key': key }, payload: { name: 'a.png', contentType: 'image/png', size } })

const fileOf = (h: Harness, bot: RaceBot | undefined, id: string) =>
  h.app.inject({ method: 'GET', url: `/v1/files/${id}`, headers: ownerHeaders(h, bot ? { 'x-bot-id': bot.botId } : {}) })

describe('upload URLs: the declared size and a single use', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  it('refuses a body larger than upsertFile declared (413, by Content-Length); nothing is stored and the URL still works', async () => {
    const file = (await upsert(h, { key: uniqueKey('declared'), size: 10 })).json().file as Upload
    const before = blobFiles(h)
    const res = await upload(h, file.uploadUrl, Buffer.alloc(600 * 1024, 1))
    expectError(res, 413, 'PayloadTooLarge')
    expect(res.json().message).toMatch(/declared.*10 bytes/)
    expect(blobFiles(h)).toEqual(before)
    expect((await fileOf(h, undefined, file.id)).json().file).toMatchObject({ status: 'upload_pending', size: null })
    expect((await upload(h, file.uploadUrl, '0123456789')).statusCode).toBe(200)
    expect((await download(h, (await fileOf(h, undefined, file.id)).json().file.url)).body).toBe('0123456789')
  })

  it('refuses a chunked body (no Content-Length) as soon as it passes the declared size', async () => {
    const file = (await upsert(h, { key: uniqueKey('declared-chunked'), size: 10 })).json().file as Upload
    const before = blobFiles(h)
    const res = await h.app.inject({
      method: 'PUT', url: pathOf(file.uploadUrl), headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
      payload: Readable.from(Array.from({ length: 8 }, () => Buffer.alloc(4, 7))),
    })
    expectError(res, 413, 'PayloadTooLarge')
    expect(blobFiles(h)).toEqual(before)
  })

  it('a webchat upload declared at 10 bytes accepts no more (the bot\'s own limit is larger)', async () => {
    const bot = await newChatBot(h)
    const key = await chatUserKey(h, bot)
    const created = await webchatUpload(h, bot, key, 10)
    expect(created.statusCode, created.body).toBe(200)
    const file = created.json().file as Upload
    expectError(await upload(h, file.uploadUrl, Buffer.alloc(600 * 1024, 1), 'image/png'), 413, 'PayloadTooLarge')
    expect((await fileOf(h, bot, file.id)).json().file).toMatchObject({ status: 'upload_pending', size: null })
  })

  it('an agent\'s handoff attachment: the declared size bounds it, and its URL works once', async () => {
    const f = await handoffFixture(h, h.credentials.token, h.credentials.workspaceId)
    const created = await h.app.inject({
      method: 'POST', url: `/v1/admin/bots/${f.botId}/handoffs/${f.conversationId}/files`,
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
      payload: { name: 'a.txt', contentType: 'text/plain', size: 3 },
    })
    expect(created.statusCode, created.body).toBe(200)
    const file = created.json().file as Upload
    expectError(await upload(h, file.uploadUrl, 'four', 'text/plain'), 413, 'PayloadTooLarge')
    expect((await upload(h, file.uploadUrl, 'abc', 'text/plain')).statusCode).toBe(200)
    expectError(await upload(h, file.uploadUrl, 'xyz', 'text/plain'), 410, 'ResourceGone')
    expect((await download(h, file.url)).body).toBe('abc')
  })

  it('an upload URL works once: a second PUT is 410 ResourceGone and the first content stays', async () => {
    const file = (await upsert(h, { key: uniqueKey('once'), size: 3 })).json().file as Upload
    expect((await upload(h, file.uploadUrl, 'abc')).statusCode).toBe(200)
    const before = blobFiles(h)
    const again = await upload(h, file.uploadUrl, 'xyz')
    expectError(again, 410, 'ResourceGone')
    expect(again.json().message).toMatch(/already used.*upsertFile/)
    expect(blobFiles(h)).toEqual(before)
    expect((await download(h, file.url)).body).toBe('abc')
  })

  it('concurrent PUTs to one URL: exactly one lands, the others are 410, one blob remains holding the winner\'s bytes', async () => {
    const file = (await upsert(h, { key: uniqueKey('once-race'), size: 1000 })).json().file as Upload
    const before = blobFiles(h).length
    const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(1000, 65 + i))
    const results = await Promise.all(bodies.map((b) => upload(h, file.uploadUrl, b)))
    const won = results.flatMap((r, i) => (r.statusCode === 200 ? [i] : []))
    expect(won).toHaveLength(1)
    for (const r of results) if (r.statusCode !== 200) expectError(r, 410, 'ResourceGone')
    expect(blobFiles(h).length).toBe(before + 1)
    expect((await download(h, file.url)).rawPayload.equals(bodies[won[0]!]!)).toBe(true)
  })
})

describe('upload quotas (per webchat user: 3 files, 1000 bytes per hour; per bot: 5000 bytes)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ config: { uploadQuota: { userFiles: 3, userBytes: 1000, windowSeconds: 3600, botBytes: 5000 } } })
  })
  afterAll(async () => h?.close())

  it('a webchat user gets 3 uploads per window, then 429 RateLimited naming the limit; another user is not affected', async () => {
    const bot = await newChatBot(h)
    const alice = await chatUserKey(h, bot)
    for (let i = 0; i < 3; i++) expect((await webchatUpload(h, bot, alice, 10)).statusCode).toBe(200)
    const refused = await webchatUpload(h, bot, alice, 10)
    expectError(refused, 429, 'RateLimited')
    expect(refused.json().message).toMatch(/3 files per 3600 s; retry in \d+ s/)
    // When the window's oldest upload leaves it: within the hour, and not before most of it has passed (just made).
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(3500)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    expect((await webchatUpload(h, bot, await chatUserKey(h, bot), 10)).statusCode).toBe(200)
  })

  it('a webchat user gets 1000 declared bytes per window, then 429 RateLimited naming the limit', async () => {
    const bot = await newChatBot(h)
    const bob = await chatUserKey(h, bot)
    expect((await webchatUpload(h, bot, bob, 600)).statusCode).toBe(200)
    const refused = await webchatUpload(h, bot, bob, 600)
    expectError(refused, 429, 'RateLimited')
    expect(refused.json().message).toMatch(/1000 bytes per 3600 s/)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect((await webchatUpload(h, bot, bob, 400)).statusCode).toBe(200)
  })

  it('a bot stores at most 5000 bytes: landed files count their size, pending ones their declared size (403 QuotaExceeded)', async () => {
    const bot = await newChatBot(h)
    const headers = ownerHeaders(h, { 'x-bot-id': bot.botId })
    const first = (await upsert(h, { key: 'a.bin', size: 3000 }, headers)).json().file as Upload
    // Pending: its declared 3000 bytes are reserved.
    const refused = await upsert(h, { key: 'b.bin', size: 3000 }, headers)
    expectError(refused, 403, 'QuotaExceeded')
    expect(refused.json().message).toMatch(/5000 bytes/)
    // Re-upserting the same key replaces its own reservation.
    const again = (await upsert(h, { key: 'a.bin', size: 3000 }, headers)).json().file as Upload
    expect(again.id).toBe(first.id)
    // Landed at 10 bytes: the rest is free again.
    expect((await upload(h, again.uploadUrl, Buffer.alloc(10))).statusCode).toBe(200)
    const b = await upsert(h, { key: 'b.bin', size: 4990 }, headers)
    expect(b.statusCode, b.body).toBe(200)
    expect((await upload(h, (b.json().file as Upload).uploadUrl, Buffer.alloc(4990))).statusCode).toBe(200)
    // Full: a webchat upload and a copy are refused too, nothing is stored.
    const before = blobFiles(h)
    expectError(await webchatUpload(h, bot, await chatUserKey(h, bot), 1), 403, 'QuotaExceeded')
    const copy = await h.app.inject({ method: 'POST', url: `/v1/files/${first.id}/c.bin`, headers, payload: {} })
    expectError(copy, 403, 'QuotaExceeded')
    expect(blobFiles(h)).toEqual(before)
  })
})
