/**
 * The Admin API operations behind the console's handoff inbox, on both backends, as an `agent` member:
 * - listenBotConversation: the conversation's frames as they are written (a user's message, the agent's reply),
 *   Last-Event-ID replay, with a Bearer token or the console's session cookie (+ its CSRF header; the cookie alone: 401);
 * - createBotHandoffFileUpload: a signed upload URL, the content served at the file's stable URL, an image reply with
 *   it; the upload takes the claim like a reply; over the Files API's size limit: 413; invalid bodies: 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, expectError, openInjectStream } from '../helpers/admin-client.js'
import { ChatClient, sseFrames, waitFor } from '../helpers/chat-client.js'
import { consoleSignIn } from '../helpers/console.js'
import { handoffFixture } from '../helpers/handoffs.js'

const MAX_FILE_BYTES = 4096

describe('the handoff inbox\'s operations', () => {
  let h: Harness
  let call: ReturnType<typeof adminClient>
  let agent: { id: string; token: string }

  beforeAll(async () => {
    h = await startParley({ config: { maxFileBytes: MAX_FILE_BYTES } })
    call = adminClient(h)
    const res = await call('POST', '/workspace-members', { body: { email: `inbox-agent-${Date.now()}@example.com`, role: 'agent' } })
    expect(res.status, res.text).toBe(201)
    agent = { id: res.body.id, token: res.body.pat.value }
  })
  afterAll(async () => h?.close())

  const fixture = () => handoffFixture(h, h.credentials.token, h.credentials.workspaceId, { reason: 'inbox' })
  const asAgent = (method: 'GET' | 'POST', path: string, body?: unknown) => call(method, path, { token: agent.token, ...(body !== undefined && { body }) })

  it('listenBotConversation streams the conversation as it is written, and replays after Last-Event-ID', async () => {
    const f = await fixture()
    const url = `/v1/admin/bots/${f.botId}/conversations/${f.conversationId}/listen`
    const headers = { authorization: `Bearer ${agent.token}`, 'x-workspace-id': h.credentials.workspaceId }
    const live = await openInjectStream(h.app, { method: 'GET', url, headers })
    try {
      expect(live.status).toBe(200)
      expect(String(live.headers['content-type'])).toContain('text/event-stream')
      const chat = new ChatClient(h.app, f.webhookId, '')
      const sent = await chat.createMessage(f.userKey, f.conversationId, { type: 'text', text: 'is anyone there?' })
      const reply = await asAgent('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { type: 'text', payload: { text: 'yes, Ada here' } })
      expect(reply.status, reply.text).toBe(200)
      const texts = () => sseFrames(live.received()).filter((x) => x.type === 'message_created').map((x) => (x.data.payload as { text?: string }).text)
      await waitFor(() => texts().includes('yes, Ada here'), 5000, 'the reply on the stream')
      // The user's message, the "joined" line of the claim the reply took, the reply; in that order.
      expect(texts().filter((t) => !t?.endsWith('joined the conversation'))).toEqual(['is anyone there?', 'yes, Ada here'])
      const frames = sseFrames(live.received()).filter((x) => x.type === 'message_created')
      expect(frames[0]!.data).toMatchObject({ id: sent.id, conversationId: f.conversationId, isBot: false })
      expect(frames.at(-1)!.data).toMatchObject({ isBot: true, metadata: { handoff: { agent: { name: expect.any(String) } } } })
    } finally {
      live.close()
    }
    // From the start: the handoff_started marker event and every message.
    const replay = await openInjectStream(h.app, { method: 'GET', url, headers: { ...headers, 'last-event-id': '0' } })
    try {
      await waitFor(() => sseFrames(replay.received()).some((x) => x.type === 'message_created' && (x.data.payload as { text?: string }).text === 'yes, Ada here'), 5000, 'the replay')
      const events = sseFrames(replay.received()).filter((x) => x.type === 'event_created').map((x) => (x.data.payload as { type?: string }).type)
      expect(events).toContain('handoff_started')
    } finally {
      replay.close()
    }
  })

  it('listenBotConversation with the console\'s session: the cookie and the CSRF header, never the cookie alone', async () => {
    const f = await fixture()
    const { cookie } = await consoleSignIn(h, { token: agent.token })
    expect(cookie).toBeDefined()
    const url = `/v1/admin/bots/${f.botId}/conversations/${f.conversationId}/listen`
    const ok = await openInjectStream(h.app, { method: 'GET', url, headers: { cookie: cookie!, 'x-parley-console': '1', 'x-workspace-id': h.credentials.workspaceId } })
    expect(ok.status).toBe(200)
    ok.close()
    const csrf = await openInjectStream(h.app, { method: 'GET', url, headers: { cookie: cookie!, 'x-workspace-id': h.credentials.workspaceId } })
    expect(csrf.status).toBe(401)
    expect(JSON.parse(await csrf.ended())).toMatchObject({ code: 401, type: 'Unauthorized' })
    // Unknown conversation of the bot, malformed Last-Event-ID: error bodies, no stream.
    expectError(await call('GET', `/bots/${f.botId}/conversations/no-such-conversation/listen`, { token: agent.token, stream: true }), 404, 'ResourceNotFound')
    const bad = await openInjectStream(h.app, { method: 'GET', url, headers: { authorization: `Bearer ${agent.token}`, 'x-workspace-id': h.credentials.workspaceId, 'last-event-id': 'abc' } })
    expect(bad.status).toBe(400)
    await bad.ended()
  })

  it('createBotHandoffFileUpload: upload, then an image reply whose URL serves the content; it claims; size and body checks', async () => {
    const f = await fixture()
    const content = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    const path = `/bots/${f.botId}/handoffs/${f.conversationId}/files`
    const created = await asAgent('POST', path, { name: '../../etc/picture.svg', contentType: 'image/svg+xml', size: content.length })
    expect(created.status, created.text).toBe(200)
    const file = created.body.file as { id: string; uploadUrl: string; url: string; contentType: string; size: number }
    expect(file).toMatchObject({ contentType: 'image/svg+xml', size: content.length })
    // Like a reply, the upload took the waiting handoff for the agent.
    const got = await asAgent('GET', `/bots/${f.botId}/handoffs/${f.conversationId}`)
    expect(got.body.handoff).toMatchObject({ status: 'active', claimedBy: { memberId: agent.id } })

    const upload = new URL(file.uploadUrl)
    const put = await h.app.inject({ method: 'PUT', url: upload.pathname + upload.search, headers: { 'content-type': 'image/svg+xml' }, payload: content })
    expect(put.statusCode, put.body).toBeLessThan(300)
    const served = new URL(file.url)
    const download = await h.app.inject({ method: 'GET', url: served.pathname + served.search })
    expect(download.statusCode).toBe(200)
    expect(download.rawPayload.equals(content)).toBe(true)
    expect(String(download.headers['content-security-policy'])).toContain('sandbox')
    // The file is the bot's, tagged as an agent's attachment, its name without path separators.
    const stored = await h.store.files.getFile(f.botId, file.id)
    expect(stored?.tags).toEqual({ source: 'handoff', conversationId: f.conversationId, memberId: agent.id })
    expect(stored?.key).toMatch(new RegExp(`^handoff/${f.conversationId}/[0-9a-f-]{36}/\\.\\._\\.\\._etc_picture\\.svg$`))

    const reply = await asAgent('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { type: 'image', payload: { imageUrl: file.url } })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.message.payload).toEqual({ type: 'image', imageUrl: file.url })

    expectError(await asAgent('POST', path, { name: 'big.bin', contentType: 'application/octet-stream', size: MAX_FILE_BYTES + 1 }), 413, 'PayloadTooLarge')
    expectError(await asAgent('POST', path, { name: '', contentType: 'text/plain', size: 1 }), 400, 'InvalidPayload')
    expectError(await asAgent('POST', path, { name: 'a', contentType: 'text/plain', size: -1 }), 400, 'InvalidPayload')
    expectError(await asAgent('POST', path, { name: 'a', contentType: 'text/plain', size: 1, extra: true }), 400, 'InvalidPayload')
    // Ended: nothing to attach to.
    expect((await asAgent('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/end`, {})).status).toBe(200)
    expectError(await asAgent('POST', path, { name: 'late.txt', contentType: 'text/plain', size: 1 }), 404, 'ResourceNotFound')
  })
})
