/**
 * A webchat user's file upload (`POST /{webhookId}/files`, Parley's addition to the Chat API): allowed only by the
 * bot's webchat settings (uploadTypes, uploadMaxBytes), through the Files API's signed upload URL (which enforces the
 * size again), served at a stable URL the user's `image`/`file` message points at; the bot sees the file in its
 * Files API (official `@botpress/client`).
 */
import * as chat from '@botpress/chat'
import type { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, runtimeClient } from '../helpers/runtime-client.js'

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f0005000201e2213bd40000000049454e44ae426082', 'hex')

describe('webchat file upload', () => {
  let h: Harness
  let bot: Client
  let user: chat.AuthenticatedClient

  const createUpload = (body: unknown, key = user.user.key) =>
    fetch(`${h.credentials.chat.url}/files`, { method: 'POST', headers: { 'x-user-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const expectError = async (res: Response, status: number, type: string, message?: RegExp) => {
    const body = (await res.json()) as Record<string, unknown>
    expect(res.status, JSON.stringify(body)).toBe(status)
    expect(body).toMatchObject({ code: status, type })
    if (message) expect(body.message).toMatch(message)
  }

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await runtimeClient(h)
    user = await chat.Client.connect({ apiUrl: h.credentials.chat.url })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('refuses uploads while the bot\'s settings allow none (403)', async () => {
    await expectError(await createUpload({ name: 'a.png', contentType: 'image/png', size: PNG.length }), 403, 'Forbidden', /does not accept files/)
  })

  it('uploads an allowed file through the signed URL; the message points at its stable URL; the bot sees the file', async () => {
    await adminClient(h).updateBot({ id: h.credentials.botId, integrations: { chat: { configuration: { webchat: { uploadTypes: 'image/*, application/pdf', uploadMaxBytes: 1000 } } } } })
    const res = await createUpload({ name: 'photo.png', contentType: 'image/png', size: PNG.length })
    expect(res.status).toBe(200)
    const { file } = (await res.json()) as { file: { id: string; uploadUrl: string; url: string } }
    expect(new URL(file.uploadUrl).origin).toBe(new URL(h.baseUrl).origin)
    const put = await fetch(file.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: PNG })
    expect(put.status, await put.clone().text()).toBeLessThan(300)
    const served = await fetch(file.url)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toMatch(/^image\/png/)
    expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG)

    const { conversation } = await user.createConversation({})
    const { message } = await user.createMessage({ conversationId: conversation.id, payload: { type: 'image', imageUrl: file.url } })
    expect(message.payload).toEqual({ type: 'image', imageUrl: file.url })

    const { file: seen } = await bot.getFile({ id: file.id })
    expect(seen.tags).toMatchObject({ source: 'webchat', userId: user.user.id })
    expect(seen.size).toBe(PNG.length)
  })

  it('refuses a type outside the allowlist (415) and a size over the bot\'s limit (413), at creation and at upload', async () => {
    await expectError(await createUpload({ name: 'run.sh', contentType: 'application/x-sh', size: 10 }), 415, 'UnsupportedMediaType', /accepted: image\/\*, application\/pdf/)
    await expectError(await createUpload({ name: 'big.pdf', contentType: 'application/pdf', size: 1001 }), 413, 'PayloadTooLarge', /up to 1000 bytes/)
    // Declared small, sent big: the upload URL holds the bot's limit too.
    const res = await createUpload({ name: 'liar.pdf', contentType: 'application/pdf', size: 10 })
    const { file } = (await res.json()) as { file: { uploadUrl: string } }
    const put = await fetch(file.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/pdf' }, body: Buffer.alloc(5000, 1) })
    expect(put.status).toBe(413)
    await expectError(await createUpload({ name: '', contentType: 'image/png', size: 1 }), 400, 'InvalidPayload')
    await expectError(await createUpload({ name: 'a.png', contentType: 'image/png', size: -1 }), 400, 'InvalidPayload')
    await expectError(await createUpload({ name: 'a.png', contentType: 'image/png', size: 1 }, 'not-a-key'), 401, 'Unauthorized')
  })

  it('upload settings are validated (400) and are not in embed snippets', async () => {
    const admin = adminClient(h)
    const bad = await admin.updateBot({ id: h.credentials.botId, integrations: { chat: { configuration: { webchat: { uploadTypes: 'images' } } } } }).catch((err: unknown) => err)
    expect(bad).toMatchObject({ code: 400, message: expect.stringMatching(/uploadTypes must be a comma-separated list/) })
    const { code } = await admin.getBotWebchat({ id: h.credentials.botId, type: 'configurable' })
    expect(code).not.toContain('upload')
  })
})
