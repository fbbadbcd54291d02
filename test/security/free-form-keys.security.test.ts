/**
 * Issue #13 (4): keys of free-form objects containing line terminators (\n, \r, U+2028, U+2029)
 * vanished from responses while the store and the SSE stream kept them. Every free-form map of the
 * schemas (message metadata, event payloads, file metadata and tags, bot tags, knowledge-base tags)
 * must answer exactly what was stored, on every route that returns it; where the domain refuses a
 * key (control characters in tags), the answer is a 400 that says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventView, MessageView } from '../../src/domain/chat-views.js'
import { adminClient, expectError as expectAdminError } from '../helpers/admin-client.js'
import { ChatClient, expectApiError, fid, openStream, sseFrames, waitFor } from '../helpers/chat-client.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { expectError, ownerHeaders, uniqueKey, upsert } from '../api/files-helpers.js'

/** One key per line terminator JavaScript's `.` does not match, and a plain one. */
const ODD = { 'line\nfeed': 1, 'carriage\rreturn': 'two', 'line\u2028separator': [3], 'paragraph\u2029separator': { four: 4 }, plain: 5 }
/** What tags may hold: the domain refuses control characters (\n, \r) in tag names. */
const ODD_TAGS = { 'line\u2028separator': 'a', 'paragraph\u2029separator': 'b', plain: 'c' }

describe('security: free-form keys with line terminators are returned exactly as stored', () => {
  let h: Harness
  let chat: ChatClient
  let admin: ReturnType<typeof adminClient>

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
    admin = adminClient(h)
  })
  afterAll(async () => h?.close())

  it('message metadata: create, the stream, get and list answer the same object', async () => {
    const { key } = await chat.createUser()
    const conversationId = (await chat.createConversation(key, fid('keys'))).id
    const stream = await openStream(chat, conversationId, key)
    try {
      const created = await chat.createMessage(key, conversationId, { type: 'text', text: 'odd keys' }, ODD)
      expect(created.metadata).toEqual(ODD)
      await waitFor(() => sseFrames(stream.received()).some((f) => f.type === 'message_created'), 5000, 'message_created frame')
      const streamed = sseFrames(stream.received()).find((f) => f.type === 'message_created')!.data
      expect(streamed).toEqual({ ...created, isBot: false })
      const got = await chat.request<{ message: MessageView }>('GET', `/messages/${created.id}`, { key })
      expect(got.status).toBe(200)
      expect(got.body.message).toEqual(created)
      const listed = await chat.request<{ messages: MessageView[] }>('GET', `/conversations/${conversationId}/messages`, { key })
      expect(listed.status).toBe(200)
      expect(listed.body.messages).toEqual([created])
    } finally {
      stream.close()
    }
  })

  it('event payloads: create and get answer the same object', async () => {
    const { key } = await chat.createUser()
    const conversationId = (await chat.createConversation(key, fid('keys'))).id
    const created = await chat.createEvent(key, conversationId, ODD)
    expect(created.payload).toEqual(ODD)
    const got = await chat.request<{ event: EventView }>('GET', `/events/${created.id}`, { key })
    expect(got.status).toBe(200)
    expect(got.body.event).toEqual(created)
  })

  it('file metadata and tags: upsert, get, list and update answer what was stored', async () => {
    const headers = ownerHeaders(h)
    const key = uniqueKey('odd-keys')
    const res = await upsert(h, { key, size: 3, metadata: ODD, tags: ODD_TAGS })
    expect(res.statusCode, res.body).toBe(200)
    const created = res.json().file
    expect(created.metadata).toEqual(ODD)
    expect(created.tags).toEqual(ODD_TAGS)

    const got = await h.app.inject({ method: 'GET', url: `/v1/files/${created.id}`, headers })
    expect(got.json().file).toMatchObject({ metadata: ODD, tags: ODD_TAGS })
    const listed = await h.app.inject({ method: 'GET', url: '/v1/files', headers })
    expect(listed.json().files.find((f: { id: string }) => f.id === created.id)).toMatchObject({ metadata: ODD, tags: ODD_TAGS })

    const updated = await h.app.inject({
      method: 'PUT', url: `/v1/files/${created.id}`, headers,
      payload: { metadata: { 'added\u2028key': true }, tags: { 'added\u2029tag': 'x' } },
    })
    expect(updated.statusCode, updated.body).toBe(200)
    expect(updated.json().file).toMatchObject({ metadata: { ...ODD, 'added\u2028key': true }, tags: { ...ODD_TAGS, 'added\u2029tag': 'x' } })
    const names = await h.app.inject({ method: 'GET', url: '/v1/files/tags', headers })
    expect(names.json().tags).toEqual(expect.arrayContaining(['line\u2028separator', 'paragraph\u2029separator', 'added\u2029tag']))
  })

  it('file tags with \\n or \\r in a name are refused with a 400 that says why', async () => {
    for (const name of ['line\nfeed', 'carriage\rreturn']) {
      const res = await upsert(h, { key: uniqueKey('bad-tag'), size: 1, tags: { [name]: 'v' } })
      expectError(res, 400, 'InvalidPayload')
      expect(res.json().message).toMatch(/control characters/)
    }
  })

  it('bot tags: create, get, list and update answer what was stored', async () => {
    const created = await admin('POST', '/bots', { body: { name: 'odd-tags', tags: { 'line\nfeed': 'a', 'carriage\rreturn': 'b', ...ODD_TAGS } } })
    expect(created.status, created.text).toBe(201)
    const tags = { 'line\nfeed': 'a', 'carriage\rreturn': 'b', ...ODD_TAGS }
    expect(created.body.bot.tags).toEqual(tags)
    const id = created.body.bot.id as string
    expect((await admin('GET', `/bots/${id}`)).body.bot.tags).toEqual(tags)
    const listed = await admin('GET', '/bots')
    expect(listed.body.bots.find((b: { id: string }) => b.id === id).tags).toEqual(tags)
    const updated = await admin('PUT', `/bots/${id}`, { body: { tags: { 'line\nfeed': null, 'new\u2028tag': 'n' } } })
    expect(updated.status, updated.text).toBe(200)
    const { 'line\nfeed': _removed, ...rest } = tags
    expect(updated.body.bot.tags).toEqual({ ...rest, 'new\u2028tag': 'n' })
  })

  it('values under such keys are validated like any other (bot tag values are strings of at most 500 characters)', async () => {
    expectAdminError(await admin('POST', '/bots', { body: { tags: { 'line\nfeed': 5 } } }), 400, 'InvalidPayload')
    expectAdminError(await admin('POST', '/bots', { body: { tags: { 'line\u2028separator': 'x'.repeat(501) } } }), 400, 'InvalidPayload')
  })

  it('knowledge-base tags: create and list answer what was stored', async () => {
    const headers = ownerHeaders(h)
    const res = await h.app.inject({ method: 'POST', url: '/v1/files/knowledge-bases', headers, payload: { name: 'odd-tags', tags: ODD_TAGS } })
    expect(res.statusCode, res.body).toBe(200)
    const kb = res.json().knowledgeBase
    expect(kb.tags).toEqual(ODD_TAGS)
    const listed = await h.app.inject({ method: 'GET', url: '/v1/files/knowledge-bases', headers })
    expect(listed.json().knowledgeBases.find((k: { id: string }) => k.id === kb.id).tags).toEqual(ODD_TAGS)
  })

  it('refuses nothing it used to accept: a plain metadata object is unchanged', async () => {
    const { key } = await chat.createUser()
    const conversationId = (await chat.createConversation(key, fid('keys'))).id
    const created = await chat.createMessage(key, conversationId, { type: 'text', text: 'plain' }, { plain: 5, nested: { 'a\nb': 1 } })
    expect(created.metadata).toEqual({ plain: 5, nested: { 'a\nb': 1 } })
    expectApiError(await chat.request('POST', '/messages', { key, body: { conversationId, payload: { type: 'text', text: 'x', 'odd\nkey': 1 } } }), 400, 'InvalidPayload')
  })
})
