/**
 * Issue #13 (5, 6, 10b, 10c): what the server writes before, around and instead of a route.
 *
 * - Errors of Node's HTTP parser (431 oversized headers, 400 malformed request, 408 timeouts) carry
 *   the Botpress error body like every other response.
 * - An early answer (413 over the body limit, 401 before the body is read) reaches a client that is
 *   still sending: the server reads and discards the rest of the body, within bounds, before it
 *   closes; a body beyond the bound is still cut.
 * - An unknown route answers 404 whatever its body.
 *
 * Over real sockets: raw TCP (node:net) for what no client sends, Node's fetch (undici) for the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_STATUS } from '../../src/lib/errors.js'
import { DRAIN_LIMIT_BYTES } from '../../src/http/plugins/connection.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ChatClient, fid, waitFor } from '../helpers/chat-client.js'
import { fetchInChild, type ChildFetchResult } from '../helpers/fetch-child.js'
import { openSocket, parseRawResponse, rawRequest, readAnswer, type RawAnswer } from '../helpers/raw-http.js'

const MiB = 1024 * 1024
const ERROR_KEYS = ['id', 'code', 'type', 'message', 'metadata']

/**
 * The Botpress error body, with code equal to the status and a registered type. Not chat-client's
 * expectApiError: that one also requires the type's own status to be the HTTP status, which 408 and
 * 431 cannot meet (no Botpress type has them; see PROTOCOL_ERROR_TYPES), and it takes an inject response.
 */
function expectErrorBody(status: number, contentType: string | null, text: string, type?: string): void {
  expect(contentType ?? '', text).toMatch(/^application\/json/)
  const body = JSON.parse(text) as Record<string, unknown>
  expect(body.code, text).toBe(status)
  expect(Object.keys(ERROR_STATUS)).toContain(body.type)
  if (type) expect(body.type).toBe(type)
  expect(typeof body.id).toBe('string')
  expect((body.id as string).length).toBeGreaterThan(0)
  expect(typeof body.message).toBe('string')
  for (const key of Object.keys(body)) expect(ERROR_KEYS).toContain(key)
}

function expectRawError(answer: RawAnswer, status: number, type?: string): void {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status)
  expectErrorBody(status, answer.headers['content-type'] ?? null, answer.body, type)
}

describe('security: HTTP parser errors, early answers and unknown routes', () => {
  let h: Harness
  let chatUrl: string
  let key: string
  let conversationId: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    chatUrl = h.credentials.chat.url
    const chat = ChatClient.of(h)
    key = (await chat.createUser()).key
    conversationId = (await chat.createConversation(key, fid('parser'))).id
  })
  afterAll(async () => h?.close())

  describe("errors of Node's HTTP parser have the error body", () => {
    it('431 for headers over 16 KB', async () => {
      const answer = await rawRequest(h.baseUrl, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
      expectRawError(answer, 431)
      expect(answer.closed).toBe(true)
    })

    it.each([
      ['raw non-ASCII bytes in the path', Buffer.concat([Buffer.from('GET /caf'), Buffer.from([0xc3, 0xa9]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])],
      ['a malformed header line', 'GET /healthz HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n'],
      ['a space before the colon', 'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n'],
      ['duplicate Content-Length', 'POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}'],
      ['Content-Length with Transfer-Encoding', 'POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
      ['an invalid method', 'G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['a bad chunk size', 'POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
      ['an unsupported HTTP version', 'GET /healthz HTTP/7.1\r\nHost: x\r\n\r\n'],
    ])('400 for %s', async (_label, request) => {
      const answer = await rawRequest(h.baseUrl, request)
      expectRawError(answer, 400, 'InvalidPayload')
    })

    it('400 for an HTTP/1.1 request without a Host header (Node answered it with an empty body)', async () => {
      const answer = await rawRequest(h.baseUrl, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n')
      expectRawError(answer, 400, 'InvalidPayload')
      expect(JSON.parse(answer.body)).toMatchObject({ message: expect.stringMatching(/Host/) })
    })

    it('417 for an Expect other than 100-continue (Node answered it with an empty body)', async () => {
      const answer = await rawRequest(h.baseUrl, 'POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}')
      expectRawError(answer, 417, 'InvalidPayload')
    })

    it('405 for CONNECT and 400 for a protocol upgrade (the connection was closed without a word)', async () => {
      expectRawError(await rawRequest(h.baseUrl, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n'), 405, 'MethodNotFound')
      expectRawError(await rawRequest(h.baseUrl, `GET /${'x'}/conversations/c/listen HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`), 400, 'InvalidPayload')
    })

    it('a well-formed request on the same kind of socket is answered normally (positive control)', async () => {
      const answer = await rawRequest(h.baseUrl, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      expect(answer.status).toBe(200)
    })
  })

  describe('early answers reach a client that is still sending', () => {
    /** Every attempt read the answer, with the error body. */
    const expectAllAnswered = (results: ChildFetchResult[], status: number, type: string) => {
      expect(results.map((r) => r.status ?? r.error)).toEqual(results.map(() => status))
      for (const r of results) expectErrorBody(status, r.contentType ?? null, r.text ?? '', type)
    }

    it('20 × a 4 MiB createMessage with fetch: every one reads the 413 with the error body', async () => {
      const prefix = `{"conversationId":"${conversationId}","payload":{"type":"text","text":"`
      const results = await fetchInChild({
        url: `${chatUrl}/messages`, method: 'POST', headers: { 'content-type': 'application/json', 'x-user-key': key }, bodyBytes: 4 * MiB, prefix,
      }, 20)
      expectAllAnswered(results, 413, 'PayloadTooLarge')
    })

    it('10 × a chunked 4 MiB createMessage (no Content-Length): every one reads the 413', async () => {
      const results = await fetchInChild({
        url: `${chatUrl}/messages`, method: 'POST', headers: { 'content-type': 'application/json', 'x-user-key': key }, bodyBytes: 4 * MiB, chunked: true,
      }, 10)
      expectAllAnswered(results, 413, 'PayloadTooLarge')
    })

    it('8 × an unauthenticated 50 MB Admin body: every one reads the 401 with the error body', async () => {
      const results = await fetchInChild({
        url: `${h.baseUrl}/v1/admin/bots`, method: 'POST', headers: { 'content-type': 'application/json' }, bodyBytes: 50 * 1000 * 1000,
      }, 8)
      expectAllAnswered(results, 401, 'Unauthorized')
    })

    it('8 × a 60 MB Admin body (over its 50 MB limit): every one reads the 413', async () => {
      const results = await fetchInChild({
        url: `${h.baseUrl}/v1/admin/bots`, method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
        bodyBytes: 60 * 1000 * 1000,
      }, 8)
      expectAllAnswered(results, 413, 'PayloadTooLarge')
    })

    it('the connection serves the next request once the rest of the body was read', async () => {
      const socket = await openSocket(h.baseUrl)
      try {
        const first = readAnswer(socket, { untilResponse: true })
        socket.write(`POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 * MiB}\r\n\r\n`)
        expectRawError(await first, 401, 'Unauthorized')
        socket.write(Buffer.alloc(2 * MiB, 'a'))
        const second = readAnswer(socket, { untilResponse: true })
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
        expect((await second).status).toBe(200)
      } finally {
        socket.destroy()
      }
    })

    it('a declared body beyond the drain bound is answered and cut at once', async () => {
      const socket = await openSocket(h.baseUrl)
      const answer = readAnswer(socket)
      socket.write(`POST /${h.credentials.chat.webhookId}/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-user-key: ${key}\r\nContent-Length: ${DRAIN_LIMIT_BYTES * 4}\r\n\r\n`)
      socket.write(Buffer.alloc(64 * 1024, 'a'))
      const result = await answer
      socket.destroy()
      expectRawError(result, 413, 'PayloadTooLarge')
      expect(result.closed).toBe(true)
    })

    it('a chunked body that goes on past the drain bound is cut', async () => {
      const socket = await openSocket(h.baseUrl)
      const answer = readAnswer(socket)
      let closed = false
      socket.once('close', () => (closed = true))
      socket.on('error', () => (closed = true))
      socket.write(`POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`)
      const chunk = Buffer.concat([Buffer.from(`${(MiB).toString(16)}\r\n`), Buffer.alloc(MiB, 'a'), Buffer.from('\r\n')])
      let written = 0
      // Write until the server cuts the connection (a few buffers' worth past the bound at most).
      while (!closed && written < DRAIN_LIMIT_BYTES * 3) {
        if (!socket.write(chunk)) await new Promise<void>((resolve) => { socket.once('drain', resolve); socket.once('close', resolve) })
        written += MiB
      }
      const result = await answer
      socket.destroy()
      expectRawError(result, 401, 'Unauthorized')
      expect(closed).toBe(true)
      expect(written).toBeLessThan(DRAIN_LIMIT_BYTES * 3)
    })
  })

  describe('unknown routes answer 404 whatever the body', () => {
    it.each([
      ['malformed JSON', 'application/json', '{"a":'],
      ['invalid UTF-8', 'application/json', Buffer.from([0x7b, 0xff, 0x7d])],
      ['an unsupported media type', 'text/plain', 'hello'],
      ['a body over the limit', 'application/json', Buffer.alloc(2 * MiB, 'a')],
    ])('POST /v1/admin/nope with %s → 404', async (_label, contentType, body) => {
      const res = await fetch(`${h.baseUrl}/v1/admin/nope`, { method: 'POST', headers: { 'content-type': contentType }, body })
      expect(res.status).toBe(404)
      expectErrorBody(404, res.headers.get('content-type'), await res.text(), 'ResourceNotFound')
      const chat = await fetch(`${chatUrl}/no/such/route`, { method: 'PUT', headers: { 'content-type': contentType, 'x-user-key': key }, body })
      expect(chat.status).toBe(404)
      expectErrorBody(404, chat.headers.get('content-type'), await chat.text(), 'ResourceNotFound')
    })

    it('a known path with the wrong method and a malformed body is still 405', async () => {
      const res = await fetch(`${h.baseUrl}/v1/admin/bots`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"a":' })
      expect(res.status).toBe(405)
      expectErrorBody(405, res.headers.get('content-type'), await res.text(), 'MethodNotFound')
    })

    it('a known route with a malformed body is still 400 (positive control)', async () => {
      const res = await fetch(`${chatUrl}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-user-key': key }, body: '{"a":' })
      expect(res.status).toBe(400)
      expectErrorBody(400, res.headers.get('content-type'), await res.text(), 'InvalidPayload')
    })
  })
})

describe('security: slow clients get a 408 with the error body', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { headersTimeoutMs: 500, requestTimeoutMs: 1000 } })
  })
  afterAll(async () => h?.close())

  it('headers that never end', async () => {
    const socket = await openSocket(h.baseUrl)
    const answer = readAnswer(socket)
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n')
    const result = await answer
    socket.destroy()
    expectRawError(result, 408)
    expect(result.closed).toBe(true)
  })

  it('a body that never ends', async () => {
    const socket = await openSocket(h.baseUrl)
    const answer = readAnswer(socket)
    socket.write(`POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.credentials.token}\r\nx-workspace-id: ${h.credentials.workspaceId}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`)
    const result = await answer
    socket.destroy()
    expectRawError(result, 408)
    expect(result.closed).toBe(true)
  })

  it('draining after an early answer is bounded by the request timeout, and nothing is written after the answer', async () => {
    const socket = await openSocket(h.baseUrl)
    const answer = readAnswer(socket)
    socket.write(`POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n\r\n`)
    socket.write(Buffer.alloc(1000, 'a'))
    const result = await answer
    socket.destroy()
    expectRawError(result, 401, 'Unauthorized')
    expect(result.closed).toBe(true)
    expect(result.text.match(/HTTP\/1\.1 /g)).toHaveLength(1)
  })
})

describe('security: requests arriving while the server shuts down', () => {
  it('get 503 ServiceUnavailable with the error body and Connection: close', async () => {
    const h = await startParley({ listen: true })
    let closing: Promise<void> | undefined
    const socket = await openSocket(h.baseUrl)
    try {
      // A request routed before the close, its body still arriving, keeps this connection active.
      const auth = `Authorization: Bearer ${h.credentials.token}\r\nx-workspace-id: ${h.credentials.workspaceId}\r\n`
      socket.write(`POST /v1/admin/bots HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 15\r\n\r\n{"name":`)
      await new Promise((resolve) => setTimeout(resolve, 100))
      closing = h.app.close()
      await waitFor(() => !h.app.server.listening, 5000, 'the server to stop listening')
      const answers = readAnswer(socket)
      socket.write('"late"}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
      const text = (await answers).text
      // The first request, routed before the close, is served; the second gets the 503.
      expect(text).toMatch(/^HTTP\/1\.1 201 /)
      const answer = parseRawResponse(text.slice(text.indexOf('HTTP/1.1 ', 1)))
      expectRawError({ ...answer, closed: true }, 503, 'ServiceUnavailable')
      expect(answer.headers.connection).toBe('close')
      expect(answer.headers['retry-after']).toBe('2')
    } finally {
      socket.destroy()
      await closing
      await h.close()
    }
  })
})
