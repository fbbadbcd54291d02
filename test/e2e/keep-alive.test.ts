/**
 * Idle keep-alive connections. A client keeps an idle connection for the next request; when the server closes it at
 * the same moment, that request goes into a closing socket and the client gets ECONNRESET, with nothing to retry on.
 * `@botpress/client` uses Node's keep-alive agent, which keeps idle sockets with no limit of its own: with the server's
 * old fixed 5 s, a bot (or a test) idle for about 5 s between two calls lost the second one (seen in CI:
 * tables-large-write's findTableRows after ~5 s of in-process requests, ECONNRESET). The server now keeps idle
 * connections PARLEY_KEEP_ALIVE_TIMEOUT_MS (65 s, above the 60 s of common proxies), and closes them after it.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { openSocket, readAnswer } from '../helpers/raw-http.js'

const healthz = (host: string) => `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`

describe('keep-alive connections', () => {
  const started: Harness[] = []
  afterAll(async () => {
    for (const h of started) await h.close()
  })

  it('stay open 65 s by default, longer than the 60 s idle of common proxies and clients', async () => {
    expect(loadConfig({}).keepAliveTimeoutMs).toBe(65_000)
    const h = await startParley({ listen: true })
    started.push(h)
    expect(h.app.server.keepAliveTimeout).toBe(65_000)
  })

  it('serve the next request on the same connection, and are closed by the server once idle past the setting', async () => {
    const h = await startParley({ listen: true, env: { PARLEY_KEEP_ALIVE_TIMEOUT_MS: '300' } })
    started.push(h)
    expect(h.app.server.keepAliveTimeout).toBe(300)
    const socket = await openSocket(h.baseUrl)
    const host = new URL(h.baseUrl).host
    for (let i = 0; i < 2; i++) {
      const answer = readAnswer(socket, { untilResponse: true })
      socket.write(healthz(host))
      const a = await answer
      expect(a.status).toBe(200)
      expect(a.closed).toBe(false)
    }
    // Idle now: the server ends the connection by itself (readAnswer resolves on close; its own idle wait is 15 s).
    const idle = await readAnswer(socket)
    expect(idle.closed).toBe(true)
    expect(idle.text).toBe('')
    socket.destroy()
  })

  it('a request still arriving when shutdown begins is answered, then its connection is closed: shutdown does not wait for it to go idle', async () => {
    // Shutdown closes the connections idle at its start; one whose request was in flight became idle only after, and
    // kept the server waiting its whole keep-alive time (seen: a test's close held ~60 s by a client's pooled socket).
    const h = await startParley({ listen: true })
    started.push(h)
    const socket = await openSocket(h.baseUrl)
    const host = new URL(h.baseUrl).host
    const body = JSON.stringify({})
    const answer = readAnswer(socket, { untilResponse: true })
    // Headers and half the body: the request has started when shutdown begins.
    socket.write(`POST /${h.credentials.chat.webhookId}/users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body.slice(0, 1)}`)
    await new Promise((r) => setTimeout(r, 50))
    let closed = false
    const closing = h.app.close().then(() => (closed = true))
    await new Promise((r) => setTimeout(r, 50))
    expect(closed).toBe(false)
    socket.write(body.slice(1))
    const a = await answer
    expect(a.status).toBe(201)
    // The server ends the connection (readAnswer resolves on close) and its close resolves.
    expect((await readAnswer(socket)).closed).toBe(true)
    await closing
    expect(closed).toBe(true)
    socket.destroy()
  })
})
