import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { errors, protocolErrorBody, type ProtocolStatus } from '../../lib/errors.js'
import { requestId } from '../../lib/ids.js'
import { sendError } from './error-handler.js'

/**
 * Most request-body bytes read and discarded after an early answer (a 413, a 401 before the body
 * was read, a 404) before the connection is cut; a declared Content-Length above it is not read.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024

/** Connections whose current request was answered while its body was still arriving. */
const answeredEarly = new WeakSet<Socket>()

const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0

/**
 * Early answers reach the client (issue #13). A request answered before its body was read would
 * otherwise be closed under the client's writes: the kernel resets the connection and most clients
 * (fetch, axios) lose the answer they were sent (EPIPE, ECONNRESET). As production servers do
 * (nginx's lingering close), the rest of the body is read and discarded — at most
 * DRAIN_LIMIT_BYTES, within the request timeout (PARLEY_REQUEST_TIMEOUT_MS, from the start of the
 * request) and the keep-alive timeout between reads — and the connection then serves the next
 * request. A body declared larger than the bound is not read: the answer goes out and the
 * connection is closed, as before. So does a client that asked for `Connection: close`, and every
 * request answered while the server shuts down.
 */
export function registerEarlyAnswers(app: FastifyInstance): void {
  // Fastify's own 503 while closing (return503OnClosing) has its own body: this one has the error body.
  // preClose hooks run right after Fastify marks itself closing, before the server stops listening.
  let closing = false
  let sweep: NodeJS.Timeout | undefined
  // The open connections, for the sweep below.
  const sockets = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  app.addHook('preClose', (done) => {
    closing = true
    // Fastify closes the connections idle now. One whose request was in flight becomes idle later (a client's pooled
    // keep-alive socket), and one opened without a request yet is never idle to Node (nor timed out once the server
    // stops its checks): either would hold the server open, the first for its whole keep-alive time, the second for
    // ever. Until the server has closed, every connection without an answer in progress is closed.
    const closeUnanswered = () => {
      for (const socket of sockets) if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage) socket.destroy()
    }
    closeUnanswered()
    sweep = setInterval(closeUnanswered, 250)
    sweep.unref()
    done()
  })
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweep)
    done()
  })
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done()
    void sendError(request, reply.header('connection', 'close').header('retry-after', '2'), errors.shuttingDown())
  })
  // While the server shuts down, nothing is drained: the answer goes out and the connection closes.
  app.addHook('onSend', (request, reply, payload, done) => {
    const req = request.raw
    if (!req.complete && hasBody(req)) {
      const declared = Number(req.headers['content-length'])
      if (closing || declared > DRAIN_LIMIT_BYTES || !req.socket) {
        reply.header('connection', 'close')
      } else {
        // Keep the connection (Fastify asks to close it after a body error), read the rest, discard it.
        reply.removeHeader('connection')
        drain(req, req.socket)
      }
    }
    done(null, payload)
  })
}

function drain(req: IncomingMessage, socket: Socket): void {
  answeredEarly.add(socket)
  let read = 0
  const finished = () => {
    answeredEarly.delete(socket)
    req.removeListener('data', onData)
  }
  const onData = (chunk: Buffer) => {
    read += chunk.length
    if (read > DRAIN_LIMIT_BYTES) {
      finished()
      socket.destroy()
    }
  }
  // Listening before the answer is sent also keeps Node from "dumping" the body unread and uncounted.
  req.on('data', onData)
  req.once('end', finished)
  req.once('close', finished)
  req.resume()
}

/** Node's parser and timeout errors → the status of the answer and what it says. */
function protocolError(err: NodeJS.ErrnoException & { reason?: string }, timeouts: { headersTimeoutMs: number; requestTimeoutMs: number }): { status: ProtocolStatus; message: string } {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        message: `The request did not arrive in time: headers are allowed ${timeouts.headersTimeoutMs} ms, the whole request ${timeouts.requestTimeoutMs} ms`,
      }
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: `Request headers are larger than this server accepts (${maxHeaderSize} bytes)` }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'Chunk extensions are larger than this server accepts' }
    default:
      return { status: 400, message: `Malformed HTTP request${err.reason ? `: ${err.reason}` : ''}` }
  }
}

/**
 * For Fastify's `clientErrorHandler`: errors Node's HTTP server raises before a request reaches
 * Fastify (malformed request line or headers, headers over 16 KB, the header and request timeouts)
 * answer with the error body, like every other response, then close the connection. Nothing is
 * written once an answer to the current request went out (an early answer whose body was being
 * drained when the request timeout struck): the connection is just closed.
 */
/**
 * A request whose `Expect` is not `100-continue`: Node answers 417 with an empty body unless the server
 * handles `checkExpectation`; this answer has the error body.
 */
export function answerExpectation(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify(protocolErrorBody(requestId(), 417, `Expect: ${String(req.headers.expect).slice(0, 100)} is not supported (only 100-continue is)`))
  res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' })
  res.end(body)
}

export function clientErrorHandler(timeouts: { headersTimeoutMs: number; requestTimeoutMs: number }) {
  return function (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (answeredEarly.has(socket) || inFlight?.headersSent || !socket.writable) {
      socket.destroy()
      return
    }
    const { status, message } = protocolError(err, timeouts)
    const id = requestId()
    this.log.debug({ reqId: id, code: err.code, status }, 'client error')
    endWithError(socket, status, protocolErrorBody(id, status, message))
  }
}

/** Writes an error answer straight to the socket (no request object to answer through) and closes it. */
function endWithError(socket: Duplex, status: number, body: object): void {
  const text = JSON.stringify(body)
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    () => socket.destroy(),
  )
}

/**
 * CONNECT and protocol upgrades (WebSocket) are not served: Node would close such a connection without
 * a word unless the server listens for them; they get an error answer instead.
 */
export function refuseTunnel(req: IncomingMessage, socket: Duplex): void {
  const error = req.method === 'CONNECT' ? errors.methodNotFound('CONNECT', req.url ?? '') : errors.invalidPayload('Protocol upgrades are not supported (the real-time stream is Server-Sent Events over plain HTTP)')
  endWithError(socket, error.status, { id: requestId(), code: error.status, type: error.type, message: error.message })
}
