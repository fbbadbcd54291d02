/**
 * HTTP over a raw TCP socket (node:net), for what no HTTP client will send: malformed request
 * lines and headers, oversized headers, partial requests left hanging. The server's answer is read
 * until it closes the connection (or `idleMs` passes without a byte, or the answer is complete when
 * `untilResponse` is set).
 */
import { connect, type Socket } from 'node:net'

export interface RawAnswer {
  /** Everything the server wrote. */
  text: string
  status: number | undefined
  headers: Record<string, string>
  body: string
  /** Whether the server closed (or reset) the connection. */
  closed: boolean
}

export function parseRawResponse(text: string): Omit<RawAnswer, 'closed'> {
  const end = text.indexOf('\r\n\r\n')
  const head = end < 0 ? text : text.slice(0, end)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = end < 0 ? '' : text.slice(end + 4)
  const length = Number(headers['content-length'])
  if (Number.isInteger(length)) body = Buffer.from(body, 'latin1').subarray(0, length).toString('utf8')
  return { text, status: status === undefined ? undefined : Number(status), headers, body }
}

/** Opens a connection to `baseUrl` (http://host:port). */
export function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket))
    socket.once('error', reject)
  })
}

/**
 * Collects what the server writes on `socket` until it closes the connection, `idleMs` passes
 * without a byte, or (with `untilResponse`) one complete response with a Content-Length arrived.
 */
export function readAnswer(socket: Socket, options: { idleMs?: number; untilResponse?: boolean } = {}): Promise<RawAnswer> {
  const idleMs = options.idleMs ?? 15_000
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let timer: NodeJS.Timeout | undefined
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.removeListener('data', onData)
      resolve({ ...parseRawResponse(Buffer.concat(chunks).toString('latin1')), closed })
    }
    const arm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => finish(false), idleMs)
    }
    const onData = (chunk: Buffer) => {
      chunks.push(chunk)
      arm()
      if (options.untilResponse) {
        const parsed = parseRawResponse(Buffer.concat(chunks).toString('latin1'))
        const length = Number(parsed.headers['content-length'])
        const end = parsed.text.indexOf('\r\n\r\n')
        if (end >= 0 && Number.isInteger(length) && Buffer.byteLength(parsed.text, 'latin1') - end - 4 >= length) finish(false)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => finish(true))
    socket.once('error', () => finish(true))
    arm()
  })
}

/** Sends `request` (bytes or text, written as latin1 so raw bytes pass through) and reads the answer. */
export async function rawRequest(baseUrl: string, request: string | Buffer, options: { idleMs?: number } = {}): Promise<RawAnswer> {
  const socket = await openSocket(baseUrl)
  const answer = readAnswer(socket, options)
  socket.write(typeof request === 'string' ? Buffer.from(request, 'latin1') : request)
  const result = await answer
  socket.destroy()
  return result
}
