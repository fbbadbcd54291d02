/**
 * The v2 cognitive API (docs/llm.md) with @botpress/cognitive@0.5.4's CognitiveBeta, unchanged, over real HTTP, and
 * raw requests for the error cases. The providers are the LLM stand-in (test/helpers/llm-stand-in.ts: no model can run
 * or be downloaded here, so a local server speaks the OpenAI and Anthropic wire), configured through a providers file.
 */
import { Writable } from 'node:stream'
import { CognitiveBeta } from '@botpress/cognitive'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { expectError } from './files-helpers.js'
import { freePort, startParley, type Harness } from '../helpers/harness.js'
import { providersFile, recordedCalls, startLlmStandIn, type LlmStandIn, type StandInAnswer } from '../helpers/llm-stand-in.js'
import { createBotKey } from '../helpers/runtime-client.js'
import { parsePrometheus, sampleValue } from '../helpers/prometheus.js'

const KEYS = { local: 'sk-local-SECRET-1111aaaa', backup: 'sk-backup-SECRET-2222bbbb', claude: 'sk-ant-SECRET-3333cccc', dead: 'sk-dead-SECRET-4444dddd' }
const TIMEOUT_MS = 250

describe('v2 cognitive API', () => {
  let h: Harness
  let standIn: LlmStandIn
  let key: string
  let beta: CognitiveBeta
  const logLines: string[] = []
  const script = (byModel: Record<string, StandInAnswer>) => {
    standIn.answer = (r) => byModel[r.body.model] ?? {}
  }
  const raw = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url: `/v2/cognitive/${url}`, headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId, 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) })
  const calls = () => recordedCalls(h)
  const hi = [{ role: 'user' as const, content: 'Hi there' }]

  beforeAll(async () => {
    standIn = await startLlmStandIn()
    const file = providersFile([
      { name: 'local', kind: 'openai', url: standIn.url, apiKey: KEYS.local, models: [{ name: 'small', inputCostPer1M: 1, outputCostPer1M: 2, tags: ['low-cost'] }, { name: 'big' }], concurrency: 2, queue: 2, timeoutMs: TIMEOUT_MS },
      { name: 'backup', kind: 'openai', url: standIn.url, apiKeyEnv: 'TEST_BACKUP_LLM_KEY', models: ['m2'] },
      { name: 'claude', kind: 'anthropic', url: standIn.url, apiKey: KEYS.claude, models: [{ name: 'claude-x', maxOutputTokens: 1000 }] },
      { name: 'dead', kind: 'openai', url: `http://127.0.0.1:${await freePort()}/v1`, apiKey: KEYS.dead, models: ['gone'] },
    ])
    const logs = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) })
    h = await startParley({
      listen: true,
      env: { PARLEY_LLM_PROVIDERS_FILE: file, TEST_BACKUP_LLM_KEY: KEYS.backup, PARLEY_LLM_FAST: 'backup:m2', PARLEY_LLM_TIMEOUT_MS: String(TIMEOUT_MS * 2), PARLEY_LLM_MAX_ANSWER_BYTES: '4096', PARLEY_LLM_BODY_LIMIT: String(64 * 1024) },
      logger: { level: 'trace', stream: logs },
    })
    key = (await createBotKey(h)).value
    beta = new CognitiveBeta({ apiUrl: h.baseUrl, botId: h.credentials.botId, token: key })
  })
  afterAll(async () => {
    await h?.close()
    await standIn?.close()
  })
  beforeEach(async () => {
    // A previous test's abandoned provider calls close their connections a moment after their answer.
    await standIn.settled()
    standIn.reset()
  })

  it('generateText: the answer, usage, cost and metadata; the provider got the model without its prefix, the key, the messages and parameters', async () => {
    script({ small: { text: 'The capital of France is Paris.' } })
    const res = await beta.generateText({
      model: 'local:small', systemPrompt: 'Be brief.', messages: [{ role: 'user', content: 'Capital of France?' }],
      maxTokens: 100, temperature: 0.2, stopSequences: ['END'], responseFormat: 'json',
      // Keys zai sends that the gateway has no use for: ignored.
      ...({ signal: {}, meta: { promptSource: 'test:source' }, userId: 'u1', topP: 1 } as object),
    })
    expect(res.output).toBe('The capital of France is Paris.')
    const sent = standIn.requests[0]!
    expect(sent.headers.authorization).toBe(`Bearer ${KEYS.local}`)
    expect(sent.body).toMatchObject({
      model: 'small', max_tokens: 100, temperature: 0.2, stop: ['END'], response_format: { type: 'json_object' },
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Capital of France?' }],
    })
    expect(sent.body.stream).toBeUndefined()
    const { usage: u, ...meta } = res.metadata
    expect(meta).toMatchObject({ provider: 'local', model: 'local:small', stopReason: 'stop' })
    expect(u.outputTokens).toBe(6)
    expect(u.inputTokens).toBeGreaterThan(0)
    expect(u.inputCost).toBeCloseTo(u.inputTokens / 1e6)
    expect(u.outputCost).toBeCloseTo((6 * 2) / 1e6)
    expect(res.metadata.cost).toBeCloseTo(u.inputCost + u.outputCost)
    expect(typeof res.metadata.latency).toBe('number')
    expect(res.metadata.warnings).toBeUndefined()
    const recorded = (await calls()).at(-1)!
    expect(recorded).toMatchObject({ botId: h.credentials.botId, workspaceId: h.credentials.workspaceId, provider: 'local', model: 'small', outputTokens: 6, via: 'cognitive-v2', promptSource: 'test:source' })
  })

  it('stopSequences as a string and maxTokens cut the answer (stopReason max_tokens)', async () => {
    script({ small: { text: 'one two three four five six' } })
    const stopped = await beta.generateText({ model: 'local:small', messages: hi, stopSequences: ' four', reasoningEffort: 'low' })
    expect(standIn.requests[0]!.body.stop).toEqual([' four'])
    expect(stopped.output).toBe('one two three')
    expect(stopped.metadata.warnings).toEqual([{ type: 'parameter_ignored', message: expect.stringContaining('reasoningEffort') }])
    const cut = await beta.generateText({ model: 'local:small', messages: hi, maxTokens: 2 })
    expect(cut.output).toBe('one two ')
    expect(cut.metadata.stopReason).toBe('max_tokens')
  })

  it('generateTextStream: NDJSON pieces joined are the answer; the last chunk has finished, toolCalls and metadata with ttft', async () => {
    script({ small: { text: 'Streaming works well' } })
    const chunks = []
    for await (const chunk of beta.generateTextStream({ model: 'local:small', messages: hi })) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(2)
    expect(chunks.map((c) => c.output ?? '').join('')).toBe('Streaming works well')
    for (const c of chunks) expect(typeof c.created).toBe('number')
    const last = chunks.at(-1)!
    expect(last).toMatchObject({ finished: true, toolCalls: [], metadata: { provider: 'local', model: 'local:small', stopReason: 'stop', usage: { outputTokens: 3 } } })
    expect(typeof last.metadata!.ttft).toBe('number')
    expect(standIn.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, model: 'small' })
    const res = await fetch(`${h.baseUrl}/v2/cognitive/generate-text-stream`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId, 'content-type': 'application/json' }, body: JSON.stringify({ messages: hi, model: 'local:small' }) })
    expect(res.headers.get('content-type')).toContain('application/x-ndjson')
    // model output is bytes a user can steer: never active content on Parley's origin
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox/)
    await res.text()
  })

  it('CORS: a browser\'s preflight allows the headers CognitiveBeta and the ADK send (X-Debug, x-multiple-integrations)', async () => {
    const res = await h.app.inject({
      method: 'OPTIONS', url: '/v2/cognitive/generate-text-stream',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-bot-id,x-debug,x-multiple-integrations' },
    })
    expect(res.statusCode).toBe(204)
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(',').map((s) => s.trim())
    for (const name of ['authorization', 'content-type', 'x-bot-id', 'x-debug', 'x-multiple-integrations']) expect(allowed, name).toContain(name)
  })

  it('listModels: the configured models in the Model shape; presets as aliases', async () => {
    const models = await beta.listModels()
    expect(models.map((m) => m.id)).toEqual(['local:small', 'local:big', 'backup:m2', 'claude:claude-x', 'dead:gone'])
    expect(models[0]).toMatchObject({ name: 'small', tags: ['low-cost'], input: { costPer1MTokens: 1 }, output: { costPer1MTokens: 2 }, lifecycle: 'production' })
    expect(models[0]!.aliases!.sort()).toEqual(['auto', 'best'])
    expect(models[2]!.aliases).toEqual(['fast'])
  })

  it('presets: best and auto (and no model) are the first configured model, fast is PARLEY_LLM_FAST; a bare name resolves', async () => {
    for (const [model, expected] of [['best', 'local:small'], ['auto', 'local:small'], [undefined, 'local:small'], ['fast', 'backup:m2'], ['m2', 'backup:m2']] as const) {
      const res = await beta.generateText({ ...(model && { model }), messages: hi })
      expect(res.metadata.model, String(model)).toBe(expected)
    }
    expect(standIn.requests.map((r) => r.body.model)).toEqual(['small', 'small', 'small', 'm2', 'm2'])
    expect(standIn.requests[3]!.headers.authorization).toBe(`Bearer ${KEYS.backup}`)
  })

  it('an array is an ordered fallback: a failed model is skipped (fallback_used, fallbackPath) and both calls are recorded', async () => {
    script({ big: { fault: 'server-error' }, m2: { text: 'from backup' } })
    const before = (await calls()).length
    const res = await beta.generateText({ model: ['local:big', 'backup:m2'], messages: hi })
    expect(res.output).toBe('from backup')
    expect(res.metadata.fallbackPath).toEqual(['local:big', 'backup:m2'])
    expect(res.metadata.warnings?.map((w) => w.type)).toEqual(['fallback_used'])
    expect((await calls()).slice(before).map((c) => [c.provider, c.model, c.error === undefined])).toEqual([['local', 'big', false], ['backup', 'm2', true]])
  })

  it('tool calls both ways, JSON and streamed, OpenAI wire', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } }]
    script({ small: { text: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] } })
    const res = await beta.generateText({ model: 'local:small', messages: hi, tools, toolControl: { mode: 'specific', toolName: 'get_weather' } })
    expect(res.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }])
    expect(res.metadata.stopReason).toBe('tool_calls')
    expect(standIn.requests[0]!.body.tools).toEqual([{ type: 'function', function: tools[0] }])
    expect(standIn.requests[0]!.body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } })

    const chunks = []
    for await (const c of beta.generateTextStream({ model: 'local:small', messages: hi, tools })) chunks.push(c)
    expect(chunks.at(-1)!.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }])

    script({ small: { text: 'It is sunny in Paris.' } })
    const answer = await beta.generateText({
      model: 'local:small', tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', type: 'tool_calls', content: null, toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
        { role: 'user', type: 'tool_result', toolResultCallId: 'call_1', content: '{"sky":"sunny"}' },
      ],
    })
    expect(answer.output).toBe('It is sunny in Paris.')
    expect(standIn.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"sunny"}' },
    ])
  })

  it('Anthropic Messages: x-api-key, system, stop_sequences, tool_use both ways, JSON and streamed; responseFormat json is ignored with a warning', async () => {
    script({ 'claude-x': { text: 'Bonjour', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: { q: 'x' } }] } })
    const res = await beta.generateText({
      model: 'claude:claude-x', systemPrompt: 'You are terse.', stopSequences: ['STOP'], responseFormat: 'json',
      tools: [{ name: 'lookup', parameters: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'q?' },
        { role: 'assistant', type: 'tool_calls', content: null, toolCalls: [{ id: 'toolu_0', type: 'function', function: { name: 'lookup', arguments: { q: 'y' } } }] },
        { role: 'user', type: 'tool_result', toolResultCallId: 'toolu_0', content: 'found' },
      ],
    })
    expect(res).toMatchObject({ output: 'Bonjour', toolCalls: [{ id: 'toolu_1', name: 'lookup', input: { q: 'x' } }], metadata: { provider: 'claude', stopReason: 'tool_calls' } })
    expect(res.metadata.warnings).toEqual([expect.objectContaining({ type: 'parameter_ignored' })])
    const sent = standIn.requests[0]!
    expect(sent.wire).toBe('anthropic')
    expect(sent.headers['x-api-key']).toBe(KEYS.claude)
    expect(sent.headers['anthropic-version']).toBe('2023-06-01')
    expect(sent.body).toMatchObject({
      model: 'claude-x', max_tokens: 1000, system: 'You are terse.', stop_sequences: ['STOP'], tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'q?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'lookup', input: { q: 'y' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'found' }] },
      ],
    })
    const chunks = []
    for await (const c of beta.generateTextStream({ model: 'claude:claude-x', messages: hi })) chunks.push(c)
    expect(chunks.map((c) => c.output ?? '').join('')).toBe('Bonjour')
    expect(chunks.at(-1)).toMatchObject({ finished: true, toolCalls: [{ id: 'toolu_1', name: 'lookup', input: { q: 'x' } }], metadata: { usage: { outputTokens: 1 } } })
  })

  it('Anthropic takes temperatures up to 1: a higher one is sent as 1, with a provider_limitation warning (none at 1, none for OpenAI\'s wire)', async () => {
    script({ 'claude-x': { text: 'Hi' } })
    const hot = await beta.generateText({ model: 'claude:claude-x', temperature: 1.5, messages: hi })
    expect(standIn.requests.at(-1)!.body.temperature).toBe(1)
    expect(hot.metadata.warnings).toEqual([{ type: 'provider_limitation', message: "temperature 1.5 is above claude's maximum of 1: 1 was sent" }])
    const warm = await beta.generateText({ model: 'claude:claude-x', temperature: 1, messages: hi })
    expect(standIn.requests.at(-1)!.body.temperature).toBe(1)
    expect(warm.metadata.warnings).toBeUndefined()
    script({ small: { text: 'Hi' } })
    const openai = await beta.generateText({ model: 'local:small', temperature: 1.5, messages: hi })
    expect(standIn.requests.at(-1)!.body.temperature).toBe(1.5)
    expect(openai.metadata.warnings).toBeUndefined()
  })

  it('provider failures: 429 → 429 RateLimited with Retry-After; 500, a malformed answer, a refused connection, refused credentials → 502; a timeout → 504', async () => {
    script({ small: { fault: 'rate-limit', retryAfter: 7 }, big: { fault: 'server-error' }, m2: { fault: 'malformed' }, 'claude-x': { fault: 'unauthorized-echo' } })
    const limited = await raw('generate-text', { model: 'local:small', messages: hi })
    expectError(limited, 429, 'RateLimited')
    expect(limited.headers['retry-after']).toBe('7')
    for (const model of ['local:big', 'backup:m2', 'dead:gone', 'claude:claude-x']) {
      const res = await raw('generate-text', { model, messages: hi })
      expectError(res, 502, 'BadGateway')
      expect(res.json().message).toContain(model)
      expect(res.json().metadata).toEqual({ subtype: 'UPSTREAM_PROVIDER_FAILED' })
    }
    // An answer past PARLEY_LLM_MAX_ANSWER_BYTES is not read to its end.
    script({ small: { text: 'word '.repeat(2000) } })
    const huge = await raw('generate-text', { model: 'local:small', messages: hi })
    expectError(huge, 502, 'BadGateway')
    expect(huge.json().message).toContain('4096 bytes')
    script({ small: { fault: 'hang' } })
    const hung = await raw('generate-text', { model: 'local:small', messages: hi })
    expectError(hung, 504, 'OperationTimeout')
    expect(hung.json().message).toContain(`${TIMEOUT_MS} ms`)
  })

  it('streams: a failure before the first piece is an error answer; a stream cut after it ends without the final line and the client throws', async () => {
    script({ small: { fault: 'server-error' }, big: { fault: 'malformed' } })
    expectError(await raw('generate-text-stream', { model: 'local:small', messages: hi }), 502, 'BadGateway')
    expectError(await raw('generate-text-stream', { model: 'local:big', messages: hi }), 502, 'BadGateway')
    script({ small: { text: 'this answer will be cut', fault: 'cut' } })
    const chunks: unknown[] = []
    const run = async () => {
      for await (const c of beta.generateTextStream({ model: 'local:small', messages: hi })) chunks.push(c)
    }
    await expect(run()).rejects.toThrow()
    expect(chunks.length).toBeGreaterThan(0)
    expect(chunks.some((c) => (c as { metadata?: unknown }).metadata)).toBe(false)
  })

  it('bad input: 400 for an unknown model (naming the configured ones) and an invalid body; 413 past the body limit; unknown keys ignored', async () => {
    const unknown = await raw('generate-text', { model: 'openai:gpt-4o', messages: hi })
    expectError(unknown, 400, 'InvalidPayload')
    expect(unknown.json().message).toContain('local:small')
    expectError(await raw('generate-text', { messages: [] }), 400)
    expectError(await raw('generate-text', { messages: [{ role: 'robot', content: 'x' }] }), 400)
    expectError(await raw('generate-text', { model: 'local:small', messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] }), 413, 'PayloadTooLarge')
    expect(standIn.requests).toHaveLength(0)
    expect((await raw('generate-text', { model: 'local:small', messages: hi, signal: {}, whatever: [1, 2] })).statusCode).toBe(200)
  })

  it('a hung provider times out (504) while another provider keeps answering', async () => {
    let answered = 0
    script({ small: { fault: 'hang' }, m2: { text: 'ok' } })
    const hung = raw('generate-text', { model: 'local:small', messages: hi }).then((res) => ({ res, answeredBefore: answered }))
    const others = Array.from({ length: 5 }, () => raw('generate-text', { model: 'backup:m2', messages: hi }).then((res) => {
      answered++
      return res
    }))
    for (const res of await Promise.all(others)) expect(res.statusCode, res.body).toBe(200)
    const { res, answeredBefore } = await hung
    expectError(res, 504, 'OperationTimeout')
    expect(answeredBefore).toBe(5)
  })

  it('a caller that goes away abandons its provider call (recorded as abandoned, not as a timeout)', async () => {
    script({ small: { fault: 'hang' } })
    const before = (await calls()).length
    const client = new AbortController()
    const call = fetch(`${h.baseUrl}/v2/cognitive/generate-text`, {
      method: 'POST', signal: client.signal, body: JSON.stringify({ model: 'local:small', messages: hi }),
      headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId, 'content-type': 'application/json' },
    }).catch(() => 'aborted')
    while (standIn.inFlight('small') < 1) await new Promise((r) => setTimeout(r, 5))
    client.abort()
    expect(await call).toBe('aborted')
    while ((await calls()).length === before) await new Promise((r) => setTimeout(r, 5))
    expect((await calls()).at(-1)!.error).toMatch(/abandoned: the caller went away/)
    // The provider's connection is closed too (this also leaves nothing open for the next test).
    while (standIn.inFlight('small') > 0) await new Promise((r) => setTimeout(r, 5))
  })

  it('per-provider concurrency: at most `concurrency` calls reach the provider, `queue` more wait, the next is refused with 503', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    script({ small: { text: 'done', gate } })
    const pending = Array.from({ length: 4 }, () => raw('generate-text', { model: 'local:small', messages: hi }))
    while (standIn.inFlight('small') < 2 || h.app.services.llm.load().queued < 2) await new Promise((r) => setTimeout(r, 5))
    const refused = await raw('generate-text', { model: 'local:small', messages: hi })
    expectError(refused, 503, 'ServiceUnavailable')
    expect(refused.headers['retry-after']).toBe('1')
    // Another provider is not held by this one's limit.
    script({ small: { text: 'done', gate }, m2: { text: 'free' } })
    expect((await raw('generate-text', { model: 'backup:m2', messages: hi })).statusCode).toBe(200)
    open()
    for (const res of await Promise.all(pending)) expect(res.statusCode, res.body).toBe(200)
    expect(standIn.requests.filter((r) => r.body.model === 'small')).toHaveLength(4)
    expect(standIn.peak('small')).toBe(2)
  })

  it('provider keys appear in no answer, log line or metric, across the error cases (the provider did get them)', async () => {
    const bodies: string[] = []
    for (const fault of ['rate-limit', 'server-error', 'unauthorized-echo', 'malformed', 'cut', 'hang'] as const) {
      script({ small: { fault }, m2: { fault }, 'claude-x': { fault } })
      for (const model of ['local:small', 'backup:m2', 'claude:claude-x', 'dead:gone']) {
        // A stream cut after its first piece has no body to read (the connection is cut).
        for (const url of fault === 'hang' ? ['generate-text'] : ['generate-text', 'generate-text-stream']) bodies.push((await raw(url, { model, messages: hi }).catch(() => ({ body: '' }))).body)
      }
    }
    bodies.push((await raw('generate-text', { model: 'nope:nope', messages: hi })).body)
    bodies.push((await h.app.inject({ method: 'GET', url: '/v2/cognitive/models', headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId } })).body)
    bodies.push((await h.app.inject({ method: 'GET', url: '/metrics' })).body)
    expect(standIn.requests.some((r) => r.headers.authorization === `Bearer ${KEYS.backup}`)).toBe(true)
    expect(standIn.requests.some((r) => r.headers['x-api-key'] === KEYS.claude)).toBe(true)
    expect(logLines.length).toBeGreaterThan(10)
    for (const secret of Object.values(KEYS)) {
      for (const text of [...bodies, ...logLines, ...(await calls()).map((c) => JSON.stringify(c))]) expect(text).not.toContain(secret)
    }
  })

  it('Prometheus: provider calls by provider, model and outcome, durations, in flight and queued (strictly parsed)', async () => {
    script({ small: { text: 'one two three' }, m2: { fault: 'server-error' } })
    const before = parsePrometheus((await h.app.inject({ method: 'GET', url: '/metrics' })).body)
    await beta.generateText({ model: 'local:small', messages: hi })
    await raw('generate-text', { model: 'backup:m2', messages: hi })
    const families = parsePrometheus((await h.app.inject({ method: 'GET', url: '/metrics' })).body)
    for (const [name, type] of [['parley_llm_provider_calls_total', 'counter'], ['parley_llm_provider_call_duration_seconds', 'histogram'], ['parley_llm_provider_calls_in_flight', 'gauge'], ['parley_llm_provider_calls_queued', 'gauge']] as const) {
      expect(families.get(name), name).toMatchObject({ type })
    }
    const delta = (name: string, labels: Record<string, string>) => (sampleValue(families, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0)
    expect(delta('parley_llm_provider_calls_total', { provider: 'local', model: 'small', outcome: 'ok' })).toBe(1)
    expect(delta('parley_llm_provider_calls_total', { provider: 'backup', model: 'm2', outcome: 'upstream' })).toBe(1)
    expect(delta('parley_llm_provider_call_duration_seconds_count', { provider: 'local' })).toBe(1)
    expect(sampleValue(families, 'parley_llm_provider_calls_in_flight')).toBe(0)
  })
})

describe('v2 cognitive API without a provider', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  it('generate-text is a 404 naming PARLEY_LLM_URL; the model list is empty', async () => {
    const key = (await createBotKey(h)).value
    const headers = { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId }
    const res = await h.app.inject({ method: 'POST', url: '/v2/cognitive/generate-text', headers, payload: { messages: [{ role: 'user', content: 'hi' }] } })
    expectError(res, 404, 'ResourceNotFound')
    expect(res.json().message).toContain('PARLEY_LLM_URL')
    const models = await h.app.inject({ method: 'GET', url: '/v2/cognitive/models', headers })
    expect(models.json()).toEqual({ models: [] })
  })
})
