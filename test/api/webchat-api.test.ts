/**
 * Botpress's webchat API (issue #30; the wire: ../shared/reference/llm-wire.md §4) under /webchat-api/{clientId},
 * called over real HTTP as `@botpress/webchat-client@0.7.3` calls it, against the demo bot, on both engines:
 * /initialize's `init` frame and the signals after it, users and keys (with the admin secret), a button's answer, the
 * conversation_started event, feedback, uploads, and the refusals: no key, another user's key, an unknown client id,
 * bad input. Every answer is a JSON body (the client parses each one). The official UI itself runs in
 * test/browser/botpress-webchat.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { SseStream } from '../e2e/sse-reader.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { frames, WebchatSession, type WebchatFrame } from '../helpers/webchat-api.js'

type Json = Record<string, any>

describe('webchat API (Botpress\'s official webchat)', () => {
  let h: Harness
  let base: string

  beforeAll(async () => {
    h = await startParley({ listen: true, demoBot: true })
    base = `${h.baseUrl}/webchat-api/${h.credentials.chat.webhookId}`
    const res = await adminClient(h)('PUT', `/bots/${h.credentials.botId}`, { body: { webchat: { uploadTypes: 'image/*', uploadMaxBytes: 10_000 } } })
    expect(res.status).toBe(200)
  })
  afterAll(async () => h?.close())

  /** One call as the webchat's client makes it; the body is always parsed (an empty one fails here, as it does there). */
  async function call(method: string, path: string, o: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(o.body !== undefined && { 'content-type': 'application/json' }), ...(o.key && { 'x-user-key': o.key }), ...o.headers },
      ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
    })
    const text = await res.text()
    expect(text, `${method} ${path} answered an empty body`).not.toBe('')
    return { status: res.status, body: JSON.parse(text) as Json }
  }

  const textOf = (m: Json) => (m.payload?.text ?? m.payload?.markdown ?? '') as string

  /** /initialize as the webchat opens it (test/helpers/webchat-api.ts): its stream and its `init` frame. */
  async function initialize(o: { key?: string; conversationId?: string; query?: string; headers?: Record<string, string> } = {}): Promise<{ stream: SseStream; init: Json }> {
    const session = await WebchatSession.open(h.baseUrl, h.credentials.chat.webhookId, o)
    return { stream: session.stream, init: session.init }
  }

  const until = async (s: SseStream, what: (f: WebchatFrame[]) => boolean) => s.waitUntil(() => what(frames(s)), 10_000)

  it('/initialize without a key: `init` first (a new user with its key, a new conversation), then the greeting', async () => {
    const { stream, init } = await initialize()
    try {
      expect(Object.keys(init).sort()).toEqual(['conversation', 'messages', 'participants', 'user'])
      expect(init.user.userKey).toEqual(expect.any(String))
      expect(init.participants.map((p: Json) => p.id)).toEqual([init.user.id])
      expect(init.conversation).toMatchObject({ id: expect.any(String), createdAt: expect.any(String) })
      // The conversation's start turn greets on this stream.
      await until(stream, (f) => f.some((x) => x.type === 'message_created' && textOf(x.data).startsWith('Hi! I am the Parley demo bot')))
      const me = await call('GET', '/users/me', { key: init.user.userKey })
      expect(me.status).toBe(200)
      expect(me.body.user.id).toBe(init.user.id)
    } finally {
      await stream.close()
    }
  })

  it('a reload (the key and conversationId) keeps the conversation: its messages newest first; a button\'s answer reads as clicked', async () => {
    const first = await initialize()
    const key = first.init.user.userKey as string
    const conversationId = first.init.conversation.id as string
    try {
      await until(first.stream, (f) => f.some((x) => x.type === 'message_created'))
      // The webchat's answer to the demo's menu: the label as text, the option's value as value.
      const sent = await call('POST', '/messages', { key, body: { conversationId, payload: { type: 'text', text: 'Show image', value: 'show image' }, metadata: { clientMessageId: 'c-1' } } })
      expect(sent.status).toBe(201)
      expect(sent.body.message.payload).toEqual({ type: 'text', text: 'Show image', value: 'show image' })
      expect(sent.body.message.metadata.clientMessageId).toBe('c-1')
      // The bot was given the value.
      await until(first.stream, (f) => f.some((x) => x.type === 'message_created' && x.data.payload.type === 'image'))
      // The webchat marks its message as processing by its clientMessageId.
      const status = frames(first.stream).find((x) => x.type === 'message_status_changed')!
      expect(status.data).toMatchObject({ newStatus: 'processing', message: { id: sent.body.message.id, metadata: { clientMessageId: 'c-1' } } })
    } finally {
      await first.stream.close()
    }
    const again = await initialize({ key, conversationId })
    try {
      expect(again.init.conversation.id).toBe(conversationId)
      expect(again.init.user).toMatchObject({ id: first.init.user.id, userKey: key })
      const messages = again.init.messages as Json[]
      expect(messages.length).toBeGreaterThanOrEqual(3)
      const times = messages.map((m) => Date.parse(m.createdAt))
      expect(times).toEqual([...times].sort((a, b) => b - a))
      expect(messages.at(-1)!.payload.text).toMatch(/^Hi! I am the Parley demo bot/)
      expect(messages.find((m) => m.metadata?.clientMessageId === 'c-1')!.payload).toEqual({ type: 'text', text: 'Show image', value: 'show image' })
    } finally {
      await again.stream.close()
    }
  })

  it('conversation_started answers status.isInitial until the user has written; a custom event is stored and readable', async () => {
    const { stream, init } = await initialize()
    const key = init.user.userKey as string
    const conversationId = init.conversation.id as string
    try {
      const opened = await call('POST', '/events', { key, body: { conversationId, payload: { type: 'conversation_started', data: {} } } })
      expect(opened.status).toBe(201)
      expect(opened.body.event.payload).toEqual({ type: 'conversation_started', data: { status: { isInitial: true } } })
      expect((await call('POST', '/messages', { key, body: { conversationId, payload: { type: 'text', text: 'hello' } } })).status).toBe(201)
      const reopened = await call('POST', '/events', { key, body: { conversationId, payload: { type: 'conversation_started', data: {} } } })
      expect(reopened.body.event.payload.data.status.isInitial).toBe(false)
      const custom = await call('POST', '/events', { key, body: { conversationId, payload: { type: 'custom', data: { page: 'pricing' } } } })
      expect(custom.status).toBe(201)
      const read = await call('GET', `/events/${custom.body.event.id}`, { key })
      expect(read.body.event.payload).toEqual({ type: 'custom', data: { page: 'pricing' } })
    } finally {
      await stream.close()
    }
  })

  it('feedback on a bot message: PUT then DELETE answer {}, and the message carries it in between', async () => {
    const { stream, init } = await initialize()
    const key = init.user.userKey as string
    try {
      await until(stream, (f) => f.some((x) => x.type === 'message_created'))
      const greeting = frames(stream).find((x) => x.type === 'message_created')!.data
      const put = await call('PUT', `/messages/${greeting.id}/feedback`, { key, body: { value: 'positive', comment: 'nice' } })
      expect(put).toEqual({ status: 200, body: {} })
      expect((await call('GET', `/messages/${greeting.id}`, { key })).body.message.feedback).toEqual({ value: 'positive', comment: 'nice' })
      expect(await call('DELETE', `/messages/${greeting.id}/feedback`, { key })).toEqual({ status: 200, body: {} })
      expect((await call('GET', `/messages/${greeting.id}`, { key })).body.message.feedback).toBeUndefined()
      expect((await call('PUT', `/messages/${greeting.id}/feedback`, { key, body: { value: 'great' } })).status).toBe(400)
    } finally {
      await stream.close()
    }
  })

  it('users: POST /users, PUT /users/me with userData and attributes, DELETE answers {}', async () => {
    const created = await call('POST', '/users', { body: { name: 'Ada', userData: { plan: 'pro' }, attributes: { locale: 'fr' } } })
    expect(created.status).toBe(201)
    expect(created.body.user).toMatchObject({ name: 'Ada', data: { plan: 'pro' }, attributes: { locale: 'fr' } })
    const key = created.body.key as string
    const updated = await call('PUT', '/users/me', { key, body: { userData: '{"plan":"team"}', attributes: '{"locale":null,"tz":"UTC"}' } })
    expect(updated.status).toBe(200)
    expect(updated.body.user).toMatchObject({ name: 'Ada', data: { plan: 'team' }, attributes: { tz: 'UTC' } })
    expect(updated.body.user.attributes.locale).toBeUndefined()
    expect((await call('PUT', '/users/me', { key, body: { attributes: 'not json' } })).status).toBe(400)
    expect((await call('PUT', '/users/me', { key, body: { userData: { big: 'x'.repeat(2000) } } })).status).toBe(400)
    expect(await call('DELETE', '/users/me', { key })).toEqual({ status: 200, body: {} })
    expect((await call('GET', '/users/me', { key })).status).toBe(401)
  })

  it('the admin secret mints a key for a backend\'s user id; /initialize?userId= with it; a wrong secret is 401', async () => {
    const secret = h.credentials.chat.encryptionKey
    const minted = await call('POST', '/users/key', { body: { id: 'crm-42' }, headers: { 'x-admin-secret': secret } })
    expect(minted.status).toBe(200)
    const { stream, init } = await initialize({ key: minted.body.key })
    try {
      expect(init.user.id).toBe('crm-42')
    } finally {
      await stream.close()
    }
    const viaQuery = await initialize({ query: '?userId=crm-43', headers: { 'x-admin-secret': secret } })
    try {
      expect(viaQuery.init.user.id).toBe('crm-43')
      expect((await call('GET', '/users/me', { key: viaQuery.init.user.userKey })).body.user.id).toBe('crm-43')
    } finally {
      await viaQuery.stream.close()
    }
    expect((await call('POST', '/users/key', { body: { id: 'crm-42' }, headers: { 'x-admin-secret': 'wrong' } })).status).toBe(401)
    expect((await call('POST', '/users/key', { body: { id: 'crm-42' } })).status).toBe(401)
    expect((await call('POST', '/users/key', { body: { id: 'bad id!' }, headers: { 'x-admin-secret': secret } })).status).toBe(400)
    const expired = await call('POST', '/users/key', { body: { id: 'crm-44', expiresAt: Date.now() - 1000 }, headers: { 'x-admin-secret': secret } })
    expect(expired.status).toBe(400)
  })

  it('an upload as the webchat does it: POST /files by key, PUT with x-amz-tagging, then a media message with its fileId', async () => {
    const { stream, init } = await initialize()
    const key = init.user.userKey as string
    const conversationId = init.conversation.id as string
    try {
      const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex')
      const file = await call('POST', '/files', {
        key,
        body: { key: 'ab12cd-dot.png', size: png.length, accessPolicies: ['public_content'], index: false, tags: { source: 'integration', integrationName: 'webchat', conversation: conversationId, user: init.user.id }, expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      })
      expect(file.status).toBe(201)
      expect(file.body.file).toMatchObject({ contentType: 'image/png', key: 'ab12cd-dot.png', size: png.length, uploadUrl: expect.any(String), url: expect.any(String), id: expect.any(String) })
      const put = await fetch(file.body.file.uploadUrl, { method: 'PUT', headers: { 'x-amz-tagging': 'public=true', 'content-type': 'image/png' }, body: png })
      expect(put.status).toBe(200)
      const sent = await call('POST', '/messages', { key, body: { conversationId, payload: { type: 'image', imageUrl: file.body.file.url, fileId: file.body.file.id } } })
      expect(sent.status).toBe(201)
      expect(sent.body.message.payload).toEqual({ type: 'image', imageUrl: file.body.file.url })
      expect(sent.body.message.metadata.webchat.fileId).toBe(file.body.file.id)
      expect((await fetch(file.body.file.url)).status).toBe(200)
      // A type the bot's settings do not accept.
      expect((await call('POST', '/files', { key, body: { key: 'x-doc.pdf', size: 10 } })).status).toBe(415)
    } finally {
      await stream.close()
    }
  })

  it('bloc messages in the webchat\'s shape both ways: the bot\'s items as {type, payload}, a file sent with text stored flat', async () => {
    const { stream, init } = await initialize()
    const key = init.user.userKey as string
    const conversationId = init.conversation.id as string
    try {
      expect((await call('POST', '/messages', { key, body: { conversationId, payload: { type: 'text', text: 'Show bloc', value: 'show bloc' } } })).status).toBe(201)
      await until(stream, (f) => f.some((x) => x.type === 'message_created' && x.data.payload.type === 'bloc'))
      const bloc = frames(stream).find((x) => x.type === 'message_created' && x.data.payload.type === 'bloc')!.data
      expect(bloc.payload.items[0]).toEqual({ type: 'text', payload: { text: 'A bloc groups items:' } })
      expect(bloc.payload.items[1]).toEqual({ type: 'image', payload: { imageUrl: expect.any(String) } })
      // What the composer sends for an image with a caption.
      const sent = await call('POST', '/messages', {
        key,
        body: { conversationId, payload: { type: 'bloc', items: [{ type: 'image', payload: { imageUrl: 'https://example.com/a.png', fileId: 'file_1' } }, { type: 'text', payload: { text: 'my cat' } }] } },
      })
      expect(sent.status).toBe(201)
      expect(sent.body.message.payload.items).toEqual([{ type: 'image', payload: { imageUrl: 'https://example.com/a.png' } }, { type: 'text', payload: { text: 'my cat' } }])
      expect(sent.body.message.metadata.webchat.fileIds).toEqual(['file_1'])
      const viaChat = await fetch(`${h.baseUrl}/${h.credentials.chat.webhookId}/messages/${sent.body.message.id}`, { headers: { 'x-user-key': key } })
      expect(((await viaChat.json()) as Json).message.payload.items).toEqual([{ type: 'image', imageUrl: 'https://example.com/a.png' }, { type: 'text', text: 'my cat' }])
    } finally {
      await stream.close()
    }
  })

  it('a chat that takes no files refuses an upload as 415 UnsupportedMediaType, not 403 (which the webchat reads as "start a new conversation")', async () => {
    const admin = adminClient(h)
    expect((await admin('PUT', `/bots/${h.credentials.botId}`, { body: { webchat: { uploadTypes: null } } })).status).toBe(200)
    const { stream, init } = await initialize()
    try {
      const refused = await call('POST', '/files', { key: init.user.userKey, body: { key: 'ab12cd-dot.png', size: 10 } })
      expect(refused.status).toBe(415)
      expect(refused.body).toMatchObject({ type: 'UnsupportedMediaType', message: expect.stringMatching(/does not accept files/) })
    } finally {
      await stream.close()
      expect((await admin('PUT', `/bots/${h.credentials.botId}`, { body: { webchat: { uploadTypes: 'image/*' } } })).status).toBe(200)
    }
  })

  it('refuses: no key (401), another user\'s conversation (403), an unknown client id (404), bad input (400); every answer JSON', async () => {
    const alice = await initialize()
    const bob = await initialize()
    try {
      const conversationId = alice.init.conversation.id as string
      expect((await call('GET', '/conversations')).status).toBe(401)
      expect((await call('GET', '/conversations', { key: 'uk_not-a-key' })).status).toBe(401)
      const other = await call('GET', `/conversations/${conversationId}`, { key: bob.init.user.userKey })
      expect(other.status).toBe(403)
      expect(other.body).toMatchObject({ code: 403, type: 'Forbidden', message: expect.any(String), id: expect.any(String) })
      expect((await call('POST', '/messages', { key: bob.init.user.userKey, body: { conversationId, payload: { type: 'text', text: 'hi' } } })).status).toBe(403)
      const denied = await SseStream.open(`${base}/initialize?conversationId=${conversationId}`, { headers: { 'x-user-key': bob.init.user.userKey } })
      expect(denied.status).toBe(403)
      await denied.close()
      expect((await call('POST', '/messages', { key: alice.init.user.userKey, body: { conversationId, payload: { type: 'unknown-kind' } } })).status).toBe(400)
      expect((await call('POST', '/messages', { key: alice.init.user.userKey, body: { conversationId, payload: { type: 'text' } } })).status).toBe(400)
      expect((await call('POST', '/events', { key: alice.init.user.userKey, body: { conversationId, payload: { type: 'message' } } })).status).toBe(400)
      // PUT /messages/{id}: the author may replace its metadata, not its payload; nobody else's message.
      const own = (await call('POST', '/messages', { key: alice.init.user.userKey, body: { conversationId, payload: { type: 'text', text: 'mine' } } })).body.message
      expect((await call('PUT', `/messages/${own.id}`, { key: alice.init.user.userKey, body: { payload: { type: 'text', text: 'changed' } } })).status).toBe(400)
      const relabelled = await call('PUT', `/messages/${own.id}`, { key: alice.init.user.userKey, body: { metadata: { tag: 'x' } } })
      expect(relabelled.status).toBe(200)
      expect(relabelled.body.message).toMatchObject({ payload: { type: 'text', text: 'mine' }, metadata: { tag: 'x' } })
      await alice.stream.waitUntil(() => frames(alice.stream).some((x) => x.type === 'message_created' && x.data.userId !== alice.init.user.id), 10_000)
      const botMessage = frames(alice.stream).find((x) => x.type === 'message_created' && x.data.userId !== alice.init.user.id)!.data
      expect((await call('PUT', `/messages/${botMessage.id}`, { key: alice.init.user.userKey, body: { metadata: {} } })).status).toBe(403)
      const unknown = await fetch(`${h.baseUrl}/webchat-api/not-a-client/conversations`, { headers: { 'x-user-key': alice.init.user.userKey } })
      expect(unknown.status).toBe(404)
      expect(await unknown.json()).toMatchObject({ code: 404 })
      expect(await call('DELETE', `/conversations/${conversationId}`, { key: alice.init.user.userKey })).toEqual({ status: 200, body: {} })
      expect(await call('POST', '/p', { body: { duration: 12, event: 'load', properties: {} } })).toEqual({ status: 200, body: {} })
    } finally {
      await alice.stream.close()
      await bob.stream.close()
    }
  })

  it('a conversation of the official webchat is the Chat and Runtime APIs\' too: same user key, same messages', async () => {
    const { stream, init } = await initialize()
    const key = init.user.userKey as string
    const conversationId = init.conversation.id as string
    try {
      expect((await call('POST', '/messages', { key, body: { conversationId, payload: { type: 'text', text: 'from the official webchat' } } })).status).toBe(201)
      const viaChat = await fetch(`${h.baseUrl}/${h.credentials.chat.webhookId}/conversations/${conversationId}/messages`, { headers: { 'x-user-key': key } })
      expect(viaChat.status).toBe(200)
      expect(((await viaChat.json()) as Json).messages.some((m: Json) => m.payload.text === 'from the official webchat')).toBe(true)
      const runtime = await runtimeClient(h)
      const { messages } = await runtime.listMessages({ conversationId })
      expect(messages.some((m) => (m.payload as Json).text === 'from the official webchat' && m.userId === init.user.id)).toBe(true)
    } finally {
      await stream.close()
    }
  })

  it('CORS: the preflight allows the webchat\'s headers (x-user-key, x-admin-secret, timeout, x-amz-tagging) from any page', async () => {
    const res = await fetch(`${base}/initialize`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-user-key,x-admin-secret,timeout,content-type,x-amz-tagging' },
    })
    expect(res.status).toBeLessThan(300)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',').map((s) => s.trim())
    for (const header of ['x-user-key', 'x-admin-secret', 'timeout', 'content-type', 'x-amz-tagging']) expect(allowed).toContain(header)
  })
})
