import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import { ProviderError, type ChatMessage, type ContentPart } from '../domain/llm/llm-provider.js'

/**
 * The HTTP side shared by the provider adapters: one POST with the call's signal (its timeout), the provider's
 * refusals as ProviderErrors (never its body: it may echo a key), and bodies read with a size cap, JSON whole or SSE
 * line by line as the chunks arrive. Made with node:http(s) and a keep-alive agent per protocol rather than fetch:
 * about half a millisecond less per call (bench/RESULTS.md, llm-gateway), on the answer path of every model call.
 */

/** A provider's answer whose status was 2xx: its body's chunks as they arrive. */
export interface ProviderResponse {
  readonly status: number
  readonly body: AsyncIterable<Uint8Array>
}

const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) }

export async function postJson(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<ProviderResponse> {
  const target = new URL(url)
  const payload = Buffer.from(JSON.stringify(body))
  let res: IncomingMessage
  try {
    res = await new Promise<IncomingMessage>((resolve, reject) => {
      const protocol = target.protocol === 'https:' ? 'https:' : 'http:'
      const request = (protocol === 'https:' ? https : http).request(target, {
        method: 'POST',
        agent: agents[protocol],
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.byteLength) },
        signal,
      }, resolve)
      request.on('error', reject)
      request.end(payload)
    })
  } catch (err) {
    if (signal.aborted) throw err
    const code = (err as { code?: unknown }).code
    throw new ProviderError('unreachable', `could not be reached (${typeof code === 'string' ? code : 'connection failed'})`)
  }
  const status = res.statusCode ?? 0
  if (status >= 200 && status < 300) return { status, body: res }
  // A refusal's body is not read (it may echo a key): the socket is closed rather than drained.
  res.destroy()
  if (status === 429) {
    const retryAfter = Number(res.headers['retry-after'])
    throw new ProviderError('rate_limited', 'is rate limiting Parley (HTTP 429); retry later', Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(Math.ceil(retryAfter), 3600) : undefined)
  }
  if (status === 401 || status === 403) throw new ProviderError('upstream', `refused Parley's credentials (HTTP ${status}): the operator checks the provider's API key`)
  throw new ProviderError('upstream', `answered HTTP ${status}`)
}

/** The body as JSON, at most `maxBytes`. */
export async function readJson(res: ProviderResponse, maxBytes: number): Promise<unknown> {
  let text = ''
  for await (const line of readText(res, maxBytes)) text += line
  try {
    return JSON.parse(text)
  } catch {
    throw new ProviderError('malformed', 'answered a body that is not JSON')
  }
}

/** The body's lines (`\n`, a trailing `\r` dropped), as they arrive, at most `maxBytes` in all. */
export async function* readLines(res: ProviderResponse, maxBytes: number): AsyncGenerator<string> {
  // The text since the last newline, in pieces: a long line is scanned once, not again with every chunk.
  let pending: string[] = []
  for await (const text of readText(res, maxBytes)) {
    let start = 0
    let i: number
    while ((i = text.indexOf('\n', start)) >= 0) {
      pending.push(text.slice(start, i))
      yield pending.join('').replace(/\r$/, '')
      pending = []
      start = i + 1
    }
    if (start < text.length) pending.push(text.slice(start))
  }
  if (pending.length > 0) yield pending.join('')
}

/** `data:` payloads of an SSE body (other fields skipped); `[DONE]` is passed on as is. */
export async function* sseData(res: ProviderResponse, maxBytes: number): AsyncGenerator<string> {
  for await (const line of readLines(res, maxBytes)) {
    if (line.startsWith('data:')) yield line.slice(5).trimStart()
  }
}

async function* readText(res: ProviderResponse, maxBytes: number): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let bytes = 0
  try {
    for await (const chunk of res.body) {
      bytes += chunk.byteLength
      if (bytes > maxBytes) throw new ProviderError('malformed', `answered more than ${maxBytes} bytes (PARLEY_LLM_MAX_ANSWER_BYTES)`)
      yield decoder.decode(chunk, { stream: true })
    }
  } catch (err) {
    if (err instanceof ProviderError) throw err
    const code = (err as { code?: unknown; cause?: { code?: unknown } }).cause?.code ?? (err as { code?: unknown }).code
    if ((err as { name?: string }).name === 'AbortError') throw err
    throw new ProviderError('malformed', `cut its answer short (${typeof code === 'string' ? code : 'connection closed'})`)
  }
  yield decoder.decode()
}

export function parseJsonLine(line: string): Record<string, unknown> {
  try {
    const value = JSON.parse(line) as unknown
    if (typeof value === 'object' && value !== null) return value as Record<string, unknown>
  } catch { /* below */ }
  throw new ProviderError('malformed', 'answered a malformed stream')
}

/** A message's text (its text parts joined; null is empty). */
export function messageText(content: ChatMessage['content']): string {
  if (content === null) return ''
  if (typeof content === 'string') return content
  return content.filter((p: ContentPart) => p.type === 'text').map((p) => p.text ?? '').join('')
}

/** A tool call's arguments as the provider sent them (JSON text): an object, or the text kept under `raw`. */
export function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) return args as Record<string, unknown>
  if (typeof args !== 'string' || args.trim() === '') return {}
  try {
    const value = JSON.parse(args) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value }
  } catch {
    return { raw: args }
  }
}

export function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0
}
