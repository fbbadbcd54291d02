/**
 * A stand-in for a language model provider. No model can run or be downloaded here, so this local server (loopback,
 * in the test's process) speaks the providers' wire instead of a real one: OpenAI's chat completions
 * (`POST /v1/chat/completions`, JSON or SSE streaming with `choices[0].delta` pieces, `tool_calls` deltas, a final
 * chunk with `finish_reason`, a usage chunk when `stream_options.include_usage`, then `data: [DONE]`) and Anthropic's
 * Messages API (`POST /v1/messages`, JSON or its SSE events). `stop` / `stop_sequences` cut the text, `max_tokens`
 * cuts it (finish `length` / `max_tokens`; one word is one token). Each test scripts the answer as a function of the
 * request, faults included: a 429 with Retry-After, a 500, a 401 that echoes the credentials it got, a hang (never
 * answers), a malformed stream, a stream cut mid-way. It records every request (tests assert what Parley sent) and
 * counts requests in flight.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LlmCallRecord } from '../../src/domain/llm/llm-usage.js'
import { startParley, type Harness, type StartOptions } from './harness.js'

/** The calls the gateway recorded for the harness's bot (oldest first, the last 500): from the store, as usage accounting wrote them. */
export async function recordedCalls(h: Harness, botId = h.credentials.botId): Promise<readonly LlmCallRecord[]> {
  // A call is recorded after its answer went out (LlmUsage.record): as every reader of usage in Parley, wait for it.
  await h.app.services.llmUsage.settled()
  return (await h.store.llm.recentCalls(botId, 500)) as LlmCallRecord[]
}

/** A PARLEY_LLM_PROVIDERS_FILE with these providers (the file's JSON as docs/llm.md shows it), in a fresh directory. */
export function providersFile(providers: Record<string, unknown>[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'parley-llm-')), 'providers.json')
  writeFileSync(file, JSON.stringify({ providers }, null, 2))
  return file
}

/**
 * A stand-in and a Parley listening on a port whose providers file lists `providers` (given the stand-in's URL);
 * `close` stops both. `fresh()` (in beforeEach) waits for calls a previous test abandoned, then forgets the stand-in's
 * requests and script.
 */
export async function parleyWithStandIn(providers: (url: string) => Record<string, unknown>[], options: StartOptions = {}) {
  const standIn = await startLlmStandIn()
  const h = await startParley({ listen: true, ...options, env: { PARLEY_LLM_PROVIDERS_FILE: providersFile(providers(standIn.url)), ...options.env } })
  return {
    h,
    standIn,
    async fresh(): Promise<void> {
      await standIn.settled()
      standIn.reset()
    },
    async close(): Promise<void> {
      await h.close()
      await standIn.close()
    },
  }
}

export interface StandInAnswer {
  /** The answer's text (default `Hello from the stand-in`). */
  text?: string
  /** Tool calls the model makes (finish `tool_calls`). */
  toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> }[]
  fault?: 'rate-limit' | 'server-error' | 'unauthorized-echo' | 'hang' | 'malformed' | 'cut'
  /** Retry-After of the rate-limit fault, in seconds. */
  retryAfter?: number
  /** Answer only once this settles (hold requests in flight). */
  gate?: Promise<unknown>
  /** A streamed answer's events go out this many ms apart (default: all at once); with `cut`, how long before the cut. */
  paceMs?: number
}

export interface StandInRequest {
  wire: 'openai' | 'anthropic'
  headers: IncomingHttpHeaders
  body: Record<string, any>
}

export interface LlmStandIn {
  /** Base URL as an operator configures it (`http://127.0.0.1:<port>/v1`). */
  url: string
  requests: StandInRequest[]
  /** Requests being answered now, and the most at once so far, for one model name (as Parley sent it). */
  inFlight(model: string): number
  peak(model: string): number
  /** The script: what to answer to a request (replaceable per test). */
  answer: (request: StandInRequest) => StandInAnswer
  /** Resolves once no request is in flight (connections Parley abandoned close a moment later). */
  settled(): Promise<void>
  /** Forgets the recorded requests and peaks, and answers the default again (between tests). */
  reset(): void
  close(): Promise<void>
}

const words = (text: string) => text.split(/(?<=\s)/).filter((w) => w !== '')

export async function startLlmStandIn(answer: (request: StandInRequest) => StandInAnswer = () => ({})): Promise<LlmStandIn> {
  const sockets = new Set<Socket>()
  const inFlight = new Map<string, number>()
  const peaks = new Map<string, number>()
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const wire = req.url === '/v1/messages' ? 'anthropic' : req.url === '/v1/chat/completions' ? 'openai' : undefined
    if (!wire || req.method !== 'POST') return void res.writeHead(404).end()
    const request: StandInRequest = { wire, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }
    standIn.requests.push(request)
    const model = String(request.body.model)
    const now = (inFlight.get(model) ?? 0) + 1
    inFlight.set(model, now)
    peaks.set(model, Math.max(peaks.get(model) ?? 0, now))
    let done = false
    const end = () => {
      if (!done) inFlight.set(model, inFlight.get(model)! - 1)
      done = true
    }
    res.once('finish', end).once('close', end)
    const script = standIn.answer(request)
    await script.gate
    respond(request, script, res)
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const standIn: LlmStandIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: [],
    inFlight: (model) => inFlight.get(model) ?? 0,
    peak: (model) => peaks.get(model) ?? 0,
    answer,
    async settled() {
      while ([...inFlight.values()].some((n) => n > 0)) await new Promise((r) => setTimeout(r, 5))
    },
    reset() {
      standIn.requests.length = 0
      peaks.clear()
      standIn.answer = () => ({})
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return standIn
}

async function respond(request: StandInRequest, script: StandInAnswer, res: ServerResponse): Promise<void> {
  const { body, wire } = request
  switch (script.fault) {
    case 'hang': return
    case 'rate-limit': return void res.writeHead(429, { 'retry-after': String(script.retryAfter ?? 7), 'content-type': 'application/json' }).end('{"error":{"message":"Rate limit reached"}}')
    case 'server-error': return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"internal"}}')
    case 'unauthorized-echo': {
      const key = String(request.headers.authorization ?? request.headers['x-api-key'] ?? '')
      return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } }))
    }
  }
  // The answer, cut by the stop sequences and max_tokens as a model would.
  let text = script.text ?? 'Hello from the stand-in'
  let finish: 'stop' | 'length' | 'tool_calls' = script.toolCalls?.length ? 'tool_calls' : 'stop'
  const stops: string[] = [body.stop ?? body.stop_sequences ?? []].flat()
  for (const s of stops) if (text.includes(s)) text = text.slice(0, text.indexOf(s))
  const max = body.max_tokens as number | undefined
  if (max !== undefined && words(text).length > max) {
    text = words(text).slice(0, max).join('')
    finish = 'length'
  }
  const calls = (script.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.arguments }))
  const inputTokens = words(JSON.stringify(body.messages ?? [])).length + (typeof body.system === 'string' ? words(body.system).length : 0)
  const outputTokens = words(text).length
  const stream = body.stream === true
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' })
    if (script.fault === 'malformed') return void res.end('{"choices": [')
    return void res.end(JSON.stringify(wire === 'openai' ? openAiAnswer(body, text, calls, finish, inputTokens, outputTokens) : anthropicAnswer(body, text, calls, finish, inputTokens, outputTokens)))
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  const events = wire === 'openai' ? openAiEvents(body, text, calls, finish, inputTokens, outputTokens) : anthropicEvents(body, text, calls, finish, inputTokens, outputTokens)
  if (script.fault === 'malformed') return void res.end(`${events[0]}data: {"choices": [{"delta": {"content": "x"\n\n`)
  if (script.fault === 'cut') {
    res.write(events.slice(0, 2).join(''))
    return void setTimeout(() => res.socket?.destroy(), script.paceMs ?? 20)
  }
  if (script.paceMs === undefined) return void res.end(events.join(''))
  for (const e of events) {
    if (res.destroyed) return
    res.write(e)
    await new Promise((resolve) => setTimeout(resolve, script.paceMs))
  }
  res.end()
}

type Call = { id: string; name: string; arguments: Record<string, unknown> }

function openAiAnswer(body: any, text: string, calls: Call[], finish: string, input: number, output: number) {
  return {
    id: 'chatcmpl-standin', object: 'chat.completion', created: 1, model: body.model,
    choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: calls.length > 0 && text === '' ? null : text, ...(calls.length > 0 && { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }) } }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  }
}

function openAiEvents(body: any, text: string, calls: Call[], finish: string, input: number, output: number): string[] {
  const chunk = (choices: unknown[], extra = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-standin', object: 'chat.completion.chunk', created: 1, model: body.model, choices, ...extra })}\n\n`
  const events = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])]
  for (const w of words(text)) events.push(chunk([{ index: 0, delta: { content: w }, finish_reason: null }]))
  calls.forEach((c, index) => {
    const args = JSON.stringify(c.arguments)
    const half = Math.floor(args.length / 2)
    events.push(chunk([{ index: 0, delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: args.slice(0, half) } }] }, finish_reason: null }]))
    events.push(chunk([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, finish_reason: null }]))
  })
  events.push(chunk([{ index: 0, delta: {}, finish_reason: finish }]))
  if (body.stream_options?.include_usage) events.push(chunk([], { usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } }))
  events.push('data: [DONE]\n\n')
  return events
}

const anthropicStop = (finish: string) => (finish === 'length' ? 'max_tokens' : finish === 'tool_calls' ? 'tool_use' : 'end_turn')

function anthropicAnswer(body: any, text: string, calls: Call[], finish: string, input: number, output: number) {
  return {
    id: 'msg_standin', type: 'message', role: 'assistant', model: body.model,
    content: [...(text !== '' ? [{ type: 'text', text }] : []), ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments }))],
    stop_reason: anthropicStop(finish), usage: { input_tokens: input, output_tokens: output },
  }
}

function anthropicEvents(body: any, text: string, calls: Call[], finish: string, input: number, output: number): string[] {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  const events = [event('message_start', { message: { id: 'msg_standin', type: 'message', role: 'assistant', model: body.model, content: [], usage: { input_tokens: input, output_tokens: 1 } } })]
  events.push(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }))
  for (const w of words(text)) events.push(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: w } }))
  events.push(event('content_block_stop', { index: 0 }))
  calls.forEach((c, i) => {
    events.push(event('content_block_start', { index: i + 1, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }))
    events.push(event('content_block_delta', { index: i + 1, delta: { type: 'input_json_delta', partial_json: JSON.stringify(c.arguments) } }))
    events.push(event('content_block_stop', { index: i + 1 }))
  })
  events.push(event('message_delta', { delta: { stop_reason: anthropicStop(finish) }, usage: { output_tokens: output } }))
  events.push(event('message_stop', {}))
  return events
}
