/**
 * Raw-socket fuzzing (issue #13): malformed HTTP/1.1 requests written byte by byte (odd request
 * lines, duplicate or conflicting Content-Length / Transfer-Encoding, broken chunking, header
 * folding, NUL bytes, bodies shorter or longer than announced) to real routes.
 *
 * Asserted: no 5xx; every 4xx, the ones Node's HTTP parser answers included (400, 431: issue #13's
 * HTTP-edge work), carries the Botpress error body with code = status; the server still answers
 * afterwards. A connection closed without an answer (CONNECT, Upgrade) is only counted
 * (PARLEY_FUZZ_STATS=1 prints the statuses).
 */
import net from 'node:net'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { ERROR_STATUS } from '../../src/lib/errors.js'
import { startParley } from '../helpers/harness.js'
import { parseRawResponse } from '../helpers/raw-http.js'

const env = process.env
const RUNS = Math.max(1, Number(env.PARLEY_FUZZ_RUNS ?? 100))
const SEED = env.PARLEY_FUZZ_SEED === undefined ? undefined : Number(env.PARLEY_FUZZ_SEED)
const PATH = env.PARLEY_FUZZ_PATH

const h = await startParley({ listen: true })
afterAll(async () => h.close())
const port = Number(new URL(h.baseUrl).port)
const { webhookId } = h.credentials.chat

/** What is wrong with a 4xx body, or undefined: the Botpress error body, code = status, a known type. */
function errorBodyProblem(status: number, text: string): string | undefined {
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    return `${status} without a JSON body`
  }
  if (typeof body.id !== 'string' || body.id === '' || body.code !== status || typeof body.message !== 'string') return `${status} with a malformed error body`
  if (!(typeof body.type === 'string' && body.type in ERROR_STATUS)) return `${status} with an unknown error type`
  return undefined
}

/** Writes the bytes, half-closes, and reads whatever comes back until the server closes (or 5 s pass). */
function exchange(bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const done = () => resolve(Buffer.concat(chunks).toString('latin1'))
    socket.setTimeout(5_000, () => socket.destroy())
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', done)
    socket.on('close', done)
    socket.write(bytes, () => socket.end())
  })
}

const PATHS = ['/healthz', `/${webhookId}/users`, `/${webhookId}/messages`, '/v1/admin/bots', '/v1/files', `/webhooks/${webhookId}`, '/v1/files/uploads/x', '*', 'http://127.0.0.1/healthz', '/%zz', '/a b', '/\u00e9']
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'CONNECT', 'TRACE', 'G\u00c9T', 'get', 'POST ', '']
const VERSIONS = ['HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'HTTP/9.9', 'http/1.1', '']

const header = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('Content-Type: application/json', 'Content-Length: 2', 'Content-Length: 0', 'Connection: close', 'X-User-Key: x', 'Authorization: Bearer x') },
  { weight: 2, arbitrary: fc.constantFrom(
    'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Type: text/plain', 'Content-Length: 2', 'Content-Length: 2, 2', 'Content-Length: -1',
    'Content-Length: 99999999999999999999', 'Content-Length: 1e3', 'Content-Length: 0x10', 'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked',
    'Transfer-Encoding: chunked, identity', 'Transfer-Encoding: xchunked', 'Connection: keep-alive', 'Connection: close', 'Expect: 100-continue', 'Expect: nope',
    'X-User-Key: x', ` folded continuation`, 'NoColon', ': empty-name', 'Bad Name: x', 'X-Nul: a\u0000b', 'X-Latin: caf\u00e9', 'Authorization: Bearer x',
    `X-Long: ${'a'.repeat(3000)}`, 'Upgrade: websocket', 'Content-Encoding: gzip',
  ) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 10, unit: fc.constantFrom(...'abcXYZ-_:; '.split('')) }), fc.string({ maxLength: 20 })).map(([k, v]) => `${k}: ${v}`) },
)

const body = fc.oneof(
  fc.constantFrom('', '{}', '{"a":1}', '{', '0\r\n\r\n', '2\r\n{}\r\n0\r\n\r\n', 'zz\r\n{}\r\n0\r\n\r\n', '2\r\n{}', 'ffffffffffffffff\r\n', '-1\r\n', '2;ext=1\r\n{}\r\n0\r\nTrailer: x\r\n\r\n', '\u0000\u0000'),
  fc.string({ maxLength: 50 }),
)

/** Mostly well-formed request lines with a Host, so that the oddities below reach the routes. */
const mostly = <T>(usual: T, odd: T[]) => fc.oneof({ arbitrary: fc.constant(usual), weight: 6 }, { arbitrary: fc.constantFrom(...odd), weight: 1 })
const rawRequest = fc
  .record({
    method: fc.oneof({ arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'), weight: 6 }, { arbitrary: fc.constantFrom(...METHODS), weight: 1 }),
    path: fc.constantFrom(...PATHS),
    version: mostly('HTTP/1.1', VERSIONS),
    lineEnd: mostly('\r\n', ['\n', '\r', '\n\r']),
    host: mostly(['Host: 127.0.0.1'], [[], ['Host: a', 'Host: b'], ['Host: ']]),
    headers: fc.array(header, { maxLength: 4 }),
    body,
  })
  .map(({ method, path, version, lineEnd, host, headers, body }) =>
    Buffer.from(`${method} ${path} ${version}${lineEnd}${[...host, ...headers].join(lineEnd)}${lineEnd}${lineEnd}${body}`, 'latin1'))

describe(`fuzz: malformed HTTP requests over raw sockets (${h.storeKind}, ${RUNS} runs)`, () => {
  it('no 5xx, every 4xx has the error body, and the server answers afterwards', async () => {
    const counts = new Map<string, number>()
    const details = await fc.check(
      fc.asyncProperty(rawRequest, async (bytes) => {
        const text = await exchange(bytes)
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 'no answer'
        counts.set(status, (counts.get(status) ?? 0) + 1)
        const sent = JSON.stringify(bytes.toString('latin1').slice(0, 300))
        if (status.startsWith('5')) throw new Error(`5xx to ${sent}: ${text.slice(0, 300)}`)
        const raw = bytes.toString('latin1')
        // HEAD answers have no body; every other 4xx has the error body (the Host-less HTTP/1.1 request and the
        // odd Expect, which Node answered itself with an empty body, included since issue #13 item 5).
        if (status.startsWith('4') && !raw.startsWith('HEAD ')) {
          // The first answer on the connection (a pipelined second request may follow it).
          const next = text.slice(5).search(/HTTP\/1\.[01] \d{3} /)
          const answer = parseRawResponse(text.slice(0, next >= 0 ? next + 5 : undefined))
          const problem = errorBodyProblem(Number(status), answer.body)
          if (problem) throw new Error(`${problem} in the answer to ${sent}: ${text.slice(0, 400)}`)
        }
        const health = await fetch(`${h.baseUrl}/healthz`)
        if (health.status !== 200) throw new Error(`/healthz answered ${health.status} after ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`)
      }),
      { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }), ...(PATH !== undefined && { path: PATH }), endOnFailure: true },
    )
    if (env.PARLEY_FUZZ_STATS === '1') console.log(`raw: ${[...counts].map(([s, n]) => `${s}×${n}`).join(' ')}`)
    if (details.failed) {
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
      throw new Error(`${fc.defaultReportMessage(details)}\nGot: ${cause}\nReplay: PARLEY_FUZZ_SEED=${details.seed} PARLEY_FUZZ_PATH=${details.counterexamplePath ?? ''} npx vitest run --project ${h.storeKind} test/fuzz/raw-http`)
    }
    expect((await fetch(`${h.baseUrl}/healthz`)).status).toBe(200)
  }, Math.max(60_000, RUNS * 1_000))
})
