/**
 * Node's fetch (undici) from a separate process. A client in the test's own process shares the
 * server's event loop, which serializes what a real client and server do at once and hides races
 * (e.g. a server closing a connection under a client that is still sending its body).
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

export interface ChildFetchResult {
  status?: number
  contentType?: string | null
  text?: string
  /** The fetch failure (its cause's code when there is one, e.g. EPIPE, ECONNRESET). */
  error?: string
}

export interface ChildFetchRequest {
  url: string
  method: string
  headers: Record<string, string>
  /** A body of this many bytes (filled with `fill`, 'a' by default), sent with a Content-Length. */
  bodyBytes: number
  fill?: string
  /** The body's first bytes (e.g. the start of a JSON object). */
  prefix?: string
  /** Send the body as a stream of 64 KiB chunks (Transfer-Encoding: chunked, no Content-Length). */
  chunked?: boolean
}

const SCRIPT = `
const [request, times] = [JSON.parse(process.argv[1]), Number(process.argv[2])]
const body = Buffer.alloc(request.bodyBytes, request.fill ?? 'a')
if (request.prefix) body.write(request.prefix)
const results = []
for (let i = 0; i < times; i++) {
  try {
    const stream = () => {
      let offset = 0
      return new ReadableStream({
        pull(controller) {
          if (offset >= body.length) return controller.close()
          controller.enqueue(body.subarray(offset, offset + 65536))
          offset += 65536
        },
      })
    }
    const res = await fetch(request.url, {
      method: request.method, headers: request.headers, ...(request.chunked ? { body: stream(), duplex: 'half' } : { body }),
    })
    results.push({ status: res.status, contentType: res.headers.get('content-type'), text: await res.text() })
  } catch (err) {
    results.push({ error: String(err.cause?.code ?? err.cause?.message ?? err.message) })
  }
}
process.stdout.write(JSON.stringify(results))
`

/** Sends `request` `times` times, one after the other, from a child Node process. */
export async function fetchInChild(request: ChildFetchRequest, times: number): Promise<ChildFetchResult[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT, JSON.stringify(request), String(times)], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  })
  return JSON.parse(stdout) as ChildFetchResult[]
}
