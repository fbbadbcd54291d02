import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'
import type { EventView, MessageView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ChatClient, expectApiError, fid, type ChatResponse, type Method } from '../helpers/chat-client.js'

const LIMIT = 1024 * 1024

const asResponse = (res: LightMyRequestResponse): ChatResponse => {
  let body: unknown
  try {
    body = JSON.parse(res.body)
  } catch {
    body = res.body
  }
  return { status: res.statusCode, headers: res.headers, text: res.body, body }
}

/** `{"a": … {"leaf": true}}` with `levels` nested objects. */
function nestedObject(levels: number): string {
  return '{"a":'.repeat(levels - 1) + '{"leaf":true}' + '}'.repeat(levels - 1)
}
/** `[[ … [1] … ]]` with `levels` nested arrays. */
function nestedArray(levels: number): string {
  return '['.repeat(levels) + '1' + ']'.repeat(levels)
}

/** The 21 Chat operations and where the OpenAPI document must place them. */
const CHAT_OPERATIONS: [string, string, string][] = [
  ['createUser', 'post', '/{webhookId}/users'],
  ['getOrCreateUser', 'post', '/{webhookId}/users/get-or-create'],
  ['getUser', 'get', '/{webhookId}/users/me'],
  ['updateUser', 'put', '/{webhookId}/users/me'],
  ['deleteUser', 'delete', '/{webhookId}/users/me'],
  ['createConversation', 'post', '/{webhookId}/conversations'],
  ['getOrCreateConversation', 'post', '/{webhookId}/conversations/get-or-create'],
  ['getConversation', 'get', '/{webhookId}/conversations/{id}'],
  ['deleteConversation', 'delete', '/{webhookId}/conversations/{id}'],
  ['listConversations', 'get', '/{webhookId}/conversations'],
  ['listenConversation', 'get', '/{webhookId}/conversations/{id}/listen'],
  ['listMessages', 'get', '/{webhookId}/conversations/{conversationId}/messages'],
  ['addParticipant', 'post', '/{webhookId}/conversations/{conversationId}/participants'],
  ['getParticipant', 'get', '/{webhookId}/conversations/{conversationId}/participants/{userId}'],
  ['removeParticipant', 'delete', '/{webhookId}/conversations/{conversationId}/participants/{userId}'],
  ['listParticipants', 'get', '/{webhookId}/conversations/{conversationId}/participants'],
  ['createMessage', 'post', '/{webhookId}/messages'],
  ['getMessage', 'get', '/{webhookId}/messages/{id}'],
  ['deleteMessage', 'delete', '/{webhookId}/messages/{id}'],
  ['createEvent', 'post', '/{webhookId}/events'],
  ['getEvent', 'get', '/{webhookId}/events/{id}'],
]

describe('security: HTTP edge', () => {
  let h: Harness
  let chat: ChatClient
  let key: string
  let conversationId: string

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
    key = (await chat.createUser()).key
    conversationId = (await chat.createConversation(key, fid('edge'))).id
  })
  afterAll(async () => h.close())

  const inject = async (method: Method, url: string, options: { payload?: string | Buffer | Readable; headers?: Record<string, string> } = {}) =>
    asResponse(await h.app.inject({ method, url, headers: options.headers ?? {}, ...(options.payload !== undefined && { payload: options.payload }) }))
  const postJson = (path: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
    inject('POST', chat.url(path), { payload, headers: { 'content-type': 'application/json', 'x-user-key': key, ...headers } })
  const messageBody = (text: string) => JSON.stringify({ conversationId, payload: { type: 'text', text } })

  describe('routing', () => {
    it.each([
      ['GET', '/nope'],
      ['GET', '/v0/admin/bots'],
      ['POST', '/a/b/c/d/e'],
      ['GET', '/favicon.ico'],
    ] as [Method, string][])('%s %s → 404 ResourceNotFound', async (method, url) => {
      expectApiError(await inject(method, url), 404, 'ResourceNotFound')
    })

    it('an unknown path under a known webhook → 404 ResourceNotFound', async () => {
      expectApiError(await inject('GET', chat.url('/nope')), 404, 'ResourceNotFound')
      expectApiError(await inject('GET', chat.url('/users/me/extra'), { headers: { 'x-user-key': key } }), 404, 'ResourceNotFound')
    })

    it.each([
      ['PATCH', '/users/me'],
      ['POST', '/users/me'],
      ['PUT', '/conversations'],
      ['DELETE', '/conversations'],
      ['PATCH', '/conversations/x'],
      ['POST', '/conversations/x/listen'],
      ['PUT', '/conversations/x/participants/y'],
      ['PUT', '/messages/x'],
      ['DELETE', '/events/x'],
      ['POST', '/hello/'],
      ['GET', '/users'],
    ] as [Method, string][])('%s {webhook}%s → 405 MethodNotFound', async (method, path) => {
      expectApiError(await inject(method, chat.url(path), { headers: { 'x-user-key': key } }), 405, 'MethodNotFound')
    })

    it.each([
      ['POST', '/healthz'],
      ['DELETE', '/readyz'],
      ['PUT', '/openapi.json'],
      ['POST', '/metrics'],
    ] as [Method, string][])('%s %s → 405 MethodNotFound', async (method, url) => {
      expectApiError(await inject(method, url), 405, 'MethodNotFound')
    })

    it('a trailing slash on a GET route is not reported as "method not allowed"', async () => {
      // GET is allowed on /users/me; the slash variant is another (unknown) path or the same one, never a 405.
      for (const path of ['/users/me/', `/conversations/${conversationId}/`]) {
        const res = await inject('GET', chat.url(path), { headers: { 'x-user-key': key } })
        expect(res.status, `${path}: ${res.text}`).not.toBe(405)
        if (res.status >= 400) expectApiError(res, res.status)
      }
    })

    it.each([
      ['a NUL byte', '%00'],
      ['an invalid percent escape', '%E0%A4%A'],
      ['an encoded lone surrogate', '%ED%A0%80'],
      ['an encoded slash traversal', '..%2F..%2Fetc%2Fpasswd'],
      ['a 2000-character id', 'x'.repeat(2000)],
      ['unicode', encodeURIComponent('ça-va-😀')],
    ])('a path id with %s is a 4xx in the error format, never a 5xx', async (_name, id) => {
      for (const path of [`/conversations/${id}`, `/messages/${id}`, `/events/${id}`, `/conversations/${conversationId}/participants/${id}`]) {
        const res = await inject('GET', chat.url(path), { headers: { 'x-user-key': key } })
        expect(res.status, `${path}: ${res.text}`).toBeGreaterThanOrEqual(400)
        expect(res.status).toBeLessThan(500)
        expectApiError(res, res.status)
      }
    })

    it('a webhook id that is very long, or strange, is a 404, never a 5xx', async () => {
      for (const webhookId of ['w'.repeat(300), '%00', '..', encodeURIComponent('<script>')]) {
        const res = await inject('GET', `/${webhookId}/hello/`)
        expect(res.status, res.text).toBeGreaterThanOrEqual(400)
        expect(res.status).toBeLessThan(500)
        expectApiError(res, res.status)
      }
    })

    it('gives each error its own id', async () => {
      const ids = new Set<string>()
      for (let i = 0; i < 10; i++) ids.add((expectApiError(await inject('GET', '/nope'), 404)).id)
      expect(ids.size).toBe(10)
    })
  })

  describe('body parsing', () => {
    it.each([
      ['a truncated object', '{'],
      ['a missing value', '{"conversationId":}'],
      ['a trailing comma', '{"conversationId":"x",}'],
      ['single quotes', "{'conversationId':'x'}"],
      ['bare words', 'hello'],
      ['only whitespace', '   '],
      ['two documents', '{}{}'],
      ['a raw control character in a string', '{"conversationId":"a\u0001b","payload":{"type":"text","text":"x"}}'],
      ['a raw NUL byte in a string', '{"conversationId":"a\u0000b","payload":{"type":"text","text":"x"}}'],
    ])('malformed JSON (%s) → 400 InvalidPayload', async (_name, payload) => {
      expectApiError(await postJson('/messages', payload), 400, 'InvalidPayload')
    })

    it.each([
      ['null', 'null'],
      ['an array', '[]'],
      ['a string', '"text"'],
      ['a number', '42'],
      ['true', 'true'],
    ])('a JSON body that is %s → 400 InvalidPayload', async (_name, payload) => {
      expectApiError(await postJson('/messages', payload), 400, 'InvalidPayload')
      expectApiError(await postJson('/conversations', payload), 400, 'InvalidPayload')
    })

    it.each([
      ['text/plain'],
      ['application/x-www-form-urlencoded'],
      ['multipart/form-data; boundary=x'],
      ['application/xml'],
      ['text/html'],
    ])('a %s body → 415 UnsupportedMediaType', async (contentType) => {
      const res = await inject('POST', chat.url('/messages'), { payload: messageBody('x'), headers: { 'content-type': contentType, 'x-user-key': key } })
      expectApiError(res, 415, 'UnsupportedMediaType')
    })

    it('a body without Content-Type → 415 UnsupportedMediaType', async () => {
      const res = await inject('POST', chat.url('/messages'), { payload: messageBody('x'), headers: { 'x-user-key': key } })
      expectApiError(res, 415, 'UnsupportedMediaType')
    })

    it('a gzip-encoded body is not inflated: refused with a 4xx, never stored', async () => {
      const res = await inject('POST', chat.url('/messages'), {
        payload: gzipSync(messageBody('zipped')),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-user-key': key },
      })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      expectApiError(res, res.status)
    })

    it('a body starting with a byte-order mark → 400 InvalidPayload', async () => {
      expectApiError(await postJson('/messages', '\uFEFF' + messageBody('bom')), 400, 'InvalidPayload')
    })

    it('application/json with a charset is accepted', async () => {
      const res = await postJson('/messages', messageBody('charset'), { 'content-type': 'application/json; charset=utf-8' })
      expect(res.status, res.text).toBe(201)
    })

    it('a body of exactly 1 MB is accepted; one byte more → 413 PayloadTooLarge', async () => {
      const frame = messageBody('')
      const fill = LIMIT - Buffer.byteLength(frame)
      const exact = messageBody('a'.repeat(fill))
      expect(Buffer.byteLength(exact)).toBe(LIMIT)
      const ok = await postJson('/messages', exact)
      expect(ok.status, ok.text.slice(0, 200)).toBe(201)
      const over = messageBody('a'.repeat(fill + 1))
      expectApiError(await postJson('/messages', over), 413, 'PayloadTooLarge')
    })

    it('a large body → 413 PayloadTooLarge on every body-taking route, before authentication matters', async () => {
      const big = JSON.stringify({ payload: { blob: 'b'.repeat(2 * LIMIT) }, conversationId })
      for (const path of ['/messages', '/events', '/conversations', '/users', '/users/get-or-create']) {
        expectApiError(await postJson(path, big), 413, 'PayloadTooLarge')
      }
      expectApiError(await inject('PUT', chat.url('/users/me'), { payload: big, headers: { 'content-type': 'application/json', 'x-user-key': key } }), 413, 'PayloadTooLarge')
    })

    it('a body larger than its (lying, small) Content-Length → 4xx, never accepted', async () => {
      const big = messageBody('z'.repeat(LIMIT + 10))
      const res = await postJson('/messages', big, { 'content-length': '64' })
      expect([400, 413]).toContain(res.status)
      expectApiError(res, res.status)
    })

    it('a body without Content-Length (streamed) over 1 MB → 413 PayloadTooLarge', async () => {
      const chunk = 'y'.repeat(64 * 1024)
      const chunks = ['{"conversationId":"x","payload":{"type":"text","text":"', ...Array.from({ length: 20 }, () => chunk), '"}}']
      const res = await inject('POST', chat.url('/messages'), { payload: Readable.from(chunks), headers: { 'content-type': 'application/json', 'x-user-key': key } })
      expectApiError(res, 413, 'PayloadTooLarge')
    })

    it('a Content-Length larger than the limit → 413 without reading', async () => {
      const res = await postJson('/messages', messageBody('x'), { 'content-length': String(LIMIT * 10) })
      expect([400, 413]).toContain(res.status)
      expectApiError(res, res.status)
    })

    it('invalid UTF-8 in the body → 400', async () => {
      const head = Buffer.from('{"conversationId":"' + conversationId + '","payload":{"type":"text","text":"')
      const tail = Buffer.from('"}}')
      const res = await postJson('/messages', Buffer.concat([head, Buffer.from([0xc3, 0x28, 0xff, 0xfe]), tail]))
      expectApiError(res, 400, 'InvalidPayload')
    })
  })

  describe('prototype pollution', () => {
    const bodies: [string, string, string][] = [
      ['top-level __proto__', '/messages', '{"__proto__":{"polluted":"yes"},"conversationId":"CID","payload":{"type":"text","text":"x"}}'],
      ['__proto__ in the payload', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x","__proto__":{"polluted":"yes"}}}'],
      ['__proto__ deep in metadata', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"a":{"b":[{"__proto__":{"polluted":"yes"}}]}}}'],
      ['constructor.prototype in metadata', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"constructor":{"prototype":{"polluted":"yes"}}}}'],
      ['a constructor key alone', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"constructor":1}}'],
      ['__proto__ in an event payload', '/events', '{"conversationId":"CID","payload":{"__proto__":{"polluted":"yes"}}}'],
      ['constructor in an event payload array', '/events', '{"conversationId":"CID","payload":{"list":[{"constructor":{"prototype":{"polluted":"yes"}}}]}}'],
      ['__proto__ in createUser', '/users', '{"__proto__":{"polluted":"yes"},"name":"x"}'],
      ['constructor in createConversation', '/conversations', '{"constructor":{"prototype":{"polluted":"yes"}}}'],
      ['__proto__ in get-or-create', '/users/get-or-create', '{"__proto__":{"isAdmin":true}}'],
    ]

    it.each(bodies)('%s → 400 InvalidPayload', async (_name, path, body) => {
      expectApiError(await postJson(path, body.replace('CID', conversationId)), 400, 'InvalidPayload')
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
    })

    it('__proto__ in a PUT body → 400', async () => {
      const res = await inject('PUT', chat.url('/users/me'), { payload: '{"__proto__":{"polluted":"yes"}}', headers: { 'content-type': 'application/json', 'x-user-key': key } })
      expectApiError(res, 400, 'InvalidPayload')
    })

    it('prototype keys in the query string pollute nothing and never cause a 5xx', async () => {
      for (const query of ['__proto__[polluted]=yes', '__proto__.polluted=yes', 'constructor.prototype.polluted=yes', 'constructor[prototype][polluted]=yes', 'toString=x', 'hasOwnProperty.x=1']) {
        const res = await inject('GET', `${chat.url('/conversations')}?${query}`, { headers: { 'x-user-key': key } })
        expect(res.status, `${query}: ${res.text}`).toBeLessThan(500)
        if (res.status >= 400) expectApiError(res, res.status)
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    })

    it('leaves Object.prototype untouched after all of the above', () => {
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false)
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'isAdmin')).toBe(false)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    })
  })

  describe('nesting depth', () => {
    it('accepts metadata nested to depth 64 (counting the body itself) and echoes it', async () => {
      // body (1) → metadata (2) → … 63 nested objects: 64 in all.
      const metadata = nestedObject(63)
      const res = await postJson('/messages', `{"conversationId":"${conversationId}","payload":{"type":"text","text":"deep"},"metadata":${metadata}}`)
      expect(res.status, res.text).toBe(201)
      const message = (res.body as { message: MessageView }).message
      expect(message.metadata).toEqual(JSON.parse(metadata))
      const got = await chat.request<{ message: MessageView }>('GET', `/messages/${message.id}`, { key })
      expect(got.body.message.metadata).toEqual(JSON.parse(metadata))
    })

    it('accepts an event payload of nested arrays to depth 64', async () => {
      const res = await postJson('/events', `{"conversationId":"${conversationId}","payload":{"list":${nestedArray(62)}}}`)
      expect(res.status, res.text).toBe(201)
      expect(JSON.stringify((res.body as { event: EventView }).event.payload)).toBe(`{"list":${nestedArray(62)}}`)
    })

    it.each([
      ['metadata objects at depth 65', () => `{"conversationId":"${conversationId}","payload":{"type":"text","text":"x"},"metadata":${nestedObject(64)}}`, '/messages'],
      ['event arrays at depth 65', () => `{"conversationId":"${conversationId}","payload":{"list":${nestedArray(63)}}}`, '/events'],
      ['100 000 nested arrays (a JSON bomb that breaks JSON.stringify)', () => `{"conversationId":"${conversationId}","payload":{"x":${nestedArray(100_000)}}}`, '/events'],
      ['100 000 nested objects in metadata', () => `{"conversationId":"${conversationId}","payload":{"type":"text","text":"x"},"metadata":${nestedObject(100_000)}}`, '/messages'],
      ['deep nesting in createUser', () => `{"name":${nestedArray(100)}}`, '/users'],
    ])('refuses %s with 400', async (_name, body, path) => {
      expectApiError(await postJson(path, body()), 400, 'InvalidPayload')
    })
  })

  describe('numbers JSON cannot round-trip', () => {
    it.each([
      ['metadata', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"n":1e400}}'],
      ['an event payload', '/events', '{"conversationId":"CID","payload":{"n":-1e999}}'],
      ['an event payload array', '/events', '{"conversationId":"CID","payload":{"l":[1,2,1e309]}}'],
    ])('a number overflowing to Infinity in %s → 400 (it would be stored as null)', async (_name, path, body) => {
      expectApiError(await postJson(path, body.replace('CID', conversationId)), 400, 'InvalidPayload')
    })
  })

  describe('NUL characters and lone surrogates', () => {
    const cases: [string, string, string][] = [
      ['NUL in message text', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"a\\u0000b"}}'],
      ['NUL in a metadata value', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"k":"\\u0000"}}'],
      ['NUL in a metadata key', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"a\\u0000b":1}}'],
      ['NUL in an event payload key', '/events', '{"conversationId":"CID","payload":{"\\u0000":true}}'],
      ['NUL in the conversation id', '/messages', '{"conversationId":"CID\\u0000","payload":{"type":"text","text":"x"}}'],
      ['NUL in a user name', '/users', '{"name":"Bob\\u0000by"}'],
      ['a lone high surrogate in text', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"\\ud800"}}'],
      ['a lone low surrogate in text', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x\\udc00y"}}'],
      ['reversed surrogates in text', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"\\ude00\\ud83d"}}'],
      ['a lone surrogate in a metadata key', '/messages', '{"conversationId":"CID","payload":{"type":"text","text":"x"},"metadata":{"\\ud800":1}}'],
      ['a lone surrogate in an event payload array', '/events', '{"conversationId":"CID","payload":{"l":["ok","\\udbff"]}}'],
      ['a lone surrogate in a user profile', '/users', '{"profile":"\\ud800"}'],
      ['a lone surrogate in a conversation id', '/conversations', '{"id":"\\ud800"}'],
    ]

    it.each(cases)('%s → 400 InvalidPayload', async (_name, path, body) => {
      expectApiError(await postJson(path, body.replace('CID', conversationId)), 400, 'InvalidPayload')
    })

    it('accepts proper surrogate pairs (emoji) and other control-free Unicode, byte-exact', async () => {
      const text = 'emoji 😀 👩‍💻, RTL \u202Eabc, zero-width \u200B, combining é'
      const res = await postJson('/messages', JSON.stringify({ conversationId, payload: { type: 'text', text } }))
      expect(res.status, res.text).toBe(201)
      const id = (res.body as { message: MessageView }).message.id
      const got = await chat.request<{ message: MessageView }>('GET', `/messages/${id}`, { key })
      expect(got.body.message.payload).toEqual({ type: 'text', text })
    })

    it('accepts escaped surrogate pairs written as \\uXXXX\\uXXXX', async () => {
      const res = await postJson('/messages', `{"conversationId":"${conversationId}","payload":{"type":"text","text":"\\ud83d\\ude00"}}`)
      expect(res.status, res.text).toBe(201)
      expect((res.body as { message: MessageView }).message.payload).toEqual({ type: 'text', text: '😀' })
    })
  })

  describe('CORS', () => {
    it('answers a preflight with the exact origin, credentials and the client headers', async () => {
      for (const path of ['/messages', `/conversations/${conversationId}/listen`, '/users/me', '/hello/']) {
        const res = await inject('OPTIONS', chat.url(path), {
          headers: { origin: 'https://widget.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-user-key, content-type, last-event-id' },
        })
        expect(res.status).toBeGreaterThanOrEqual(200)
        expect(res.status).toBeLessThan(300)
        expect(res.headers['access-control-allow-origin']).toBe('https://widget.example')
        expect(res.headers['access-control-allow-credentials']).toBe('true')
        const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/\s*,\s*/)
        for (const header of ['x-user-key', 'last-event-id', 'content-type', 'cache-control']) expect(allowed).toContain(header)
        const methods = String(res.headers['access-control-allow-methods']).split(/\s*,\s*/)
        for (const method of ['GET', 'POST', 'PUT', 'DELETE']) expect(methods).toContain(method)
        expect(String(res.headers.vary ?? '')).toMatch(/origin/i)
      }
    })

    it('an OPTIONS request that is not a valid preflight still gets a 2xx or the error format', async () => {
      const variants: Record<string, string>[] = [{}, { origin: 'https://widget.example' }, { 'access-control-request-method': 'GET' }]
      for (const headers of variants) {
        const res = await inject('OPTIONS', chat.url('/users/me'), { headers })
        if (res.status >= 400) expectApiError(res, res.status)
        else expect(res.status).toBeLessThan(300)
      }
    })

    it('never answers with a wildcard origin', async () => {
      const res = await inject('OPTIONS', chat.url('/messages'), { headers: { origin: 'https://other.example', 'access-control-request-method': 'GET' } })
      expect(res.headers['access-control-allow-origin']).toBe('https://other.example')
      expect(res.headers['access-control-allow-origin']).not.toBe('*')
    })

    it('echoes the origin on successes and on errors, so browsers can read error bodies', async () => {
      const ok = await inject('GET', chat.url('/hello/'), { headers: { origin: 'https://widget.example' } })
      expect(ok.headers['access-control-allow-origin']).toBe('https://widget.example')
      const refused = await inject('GET', chat.url('/users/me'), { headers: { origin: 'https://widget.example' } })
      expectApiError(refused, 401, 'Unauthorized')
      expect(refused.headers['access-control-allow-origin']).toBe('https://widget.example')
      expect(refused.headers['access-control-allow-credentials']).toBe('true')
    })
  })

  describe('operational endpoints', () => {
    it('/healthz and /readyz answer 200', async () => {
      const health = await inject('GET', '/healthz')
      expect(health.status).toBe(200)
      expect(health.body).toEqual({ status: 'ok' })
      const ready = await inject('GET', '/readyz')
      expect(ready.status).toBe(200)
      expect(ready.body).toEqual({ status: 'ready' })
    })

    it('/openapi.json is valid JSON documenting every chat operation at its path and method', async () => {
      const res = await inject('GET', '/openapi.json')
      expect(res.status).toBe(200)
      expect(String(res.headers['content-type'])).toMatch(/json/)
      const doc = JSON.parse(res.text) as { openapi: string; paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>> }
      expect(doc.openapi).toMatch(/^3\./)
      for (const [operationId, method, path] of CHAT_OPERATIONS) {
        const operation = doc.paths[path]?.[method]
        expect(operation, `${operationId}: ${method.toUpperCase()} ${path}`).toBeDefined()
        expect(operation!.operationId).toBe(operationId)
        if (operationId === 'createUser') expect(operation!.security ?? []).toEqual([])
        else expect(operation!.security, `${operationId} declares the x-user-key scheme`).toEqual([{ userKey: [] }])
      }
      const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId))
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('/openapi.json contains no secret', async () => {
      const res = await inject('GET', '/openapi.json')
      for (const secret of [h.credentials.chat.encryptionKey, h.credentials.chat.webhookId, h.credentials.token, key]) {
        expect(res.text).not.toContain(secret)
      }
    })

    it('/metrics answers Prometheus text with request counters', async () => {
      await inject('GET', '/healthz')
      const res = await inject('GET', '/metrics')
      expect(res.status).toBe(200)
      expect(String(res.headers['content-type'])).toMatch(/^text\/plain/)
      expect(res.text).toContain('parley_http_requests_total')
      expect(res.text).toContain('parley_http_request_duration_seconds_count')
    })

    it('/metrics labels routes by pattern, never by ids or keys', async () => {
      await inject('GET', chat.url(`/conversations/${conversationId}`), { headers: { 'x-user-key': key } })
      await inject('GET', `/${'probe-' + fid('p')}/hello/`)
      const res = await inject('GET', '/metrics')
      expect(res.text).not.toContain(conversationId)
      expect(res.text).not.toContain(h.credentials.chat.webhookId)
      expect(res.text).not.toContain(key)
    })
  })
})
