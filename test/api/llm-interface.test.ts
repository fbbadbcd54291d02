/**
 * Botpress's `llm` interface on Parley's gateway (docs/llm.md "The llm interface"), with @botpress/client's callAction and
 * getBot, unchanged: each configured provider is a built-in integration implementing generateContent and
 * listLanguageModels (what @botpress/cognitive's default path and zai with a plain Client call). The provider is the LLM
 * stand-in (test/helpers/llm-stand-in.ts: no model can run or be downloaded here, so a local server speaks the OpenAI wire).
 */
import { Client, isApiError } from '@botpress/client'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/harness.js'
import { parleyWithStandIn, recordedCalls, type LlmStandIn } from '../helpers/llm-stand-in.js'
import { createBotKey } from '../helpers/runtime-client.js'

describe('the llm interface', () => {
  let llm: Awaited<ReturnType<typeof parleyWithStandIn>>
  let h: Harness
  let standIn: LlmStandIn
  let client: Client

  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise
    } catch (err) {
      if (isApiError(err)) return { code: err.code, type: err.type, message: err.message, metadata: (err as { metadata?: unknown }).metadata }
      throw err
    }
    throw new Error('expected a failure')
  }

  beforeAll(async () => {
    llm = await parleyWithStandIn((url) => [
      { name: 'local', kind: 'openai', url, apiKey: 'sk-local', models: [{ name: 'small', inputCostPer1M: 1, outputCostPer1M: 2, tags: ['low-cost'] }, 'big'] },
      { name: 'other', kind: 'openai', url, apiKey: 'sk-other', models: ['m2'] },
    ])
    ;({ h, standIn } = llm)
    client = new Client({ apiUrl: h.baseUrl, botId: h.credentials.botId, token: (await createBotKey(h)).value })
  })
  afterAll(() => llm?.close())
  beforeEach(() => llm.fresh())

  it('getBot (the bot key\'s own bot) lists each provider as a registered integration of the interface', async () => {
    const { bot } = await client.getBot({ id: h.credentials.botId })
    expect(Object.keys(bot.integrations).sort()).toEqual(['chat', 'local', 'other'])
    expect(bot.integrations.local).toMatchObject({ name: 'local', status: 'registered', enabled: true })
  })

  it('listLanguageModels: the provider\'s models, ids without the provider', async () => {
    const { output } = await client.callAction({ type: 'local:listLanguageModels', input: {} })
    expect((output.models as { id: string }[]).map((m) => m.id)).toEqual(['small', 'big'])
    expect((output.models as object[])[0]).toMatchObject({ id: 'small', name: 'small', tags: ['low-cost'], input: { costPer1MTokens: 1 }, output: { costPer1MTokens: 2 } })
  })

  it('generateContent: the legacy input to the provider, the legacy output with usage and cost; recorded via llm-interface', async () => {
    standIn.answer = () => ({ text: 'Bonjour le monde' })
    const { output } = await client.callAction({
      type: 'local:generateContent',
      input: {
        model: { id: 'small' }, systemPrompt: 'Translate.', messages: [{ role: 'user', type: 'text', content: 'Hello world' }],
        stopSequences: ['END'], maxTokens: 50, temperature: 0.3, responseFormat: 'json_object', userId: 'u-1', meta: { promptSource: 'test' },
        signal: {},
      },
    })
    expect(standIn.requests[0]!.headers.authorization).toBe('Bearer sk-local')
    expect(standIn.requests[0]!.body).toMatchObject({
      model: 'small', max_tokens: 50, temperature: 0.3, stop: ['END'], response_format: { type: 'json_object' },
      messages: [{ role: 'system', content: 'Translate.' }, { role: 'user', content: 'Hello world' }],
    })
    expect(output).toMatchObject({
      provider: 'local', model: 'small',
      choices: [{ type: 'text', content: 'Bonjour le monde', role: 'assistant', index: 0, stopReason: 'stop' }],
      usage: { outputTokens: 3 },
    })
    expect(output.botpress.cost).toBeCloseTo(output.usage.inputCost + output.usage.outputCost)
    expect((await recordedCalls(h)).slice(-1)[0]).toMatchObject({ via: 'llm-interface', provider: 'local', model: 'small', userId: 'u-1', promptSource: 'test' })
  })

  it('generateContent with tools: the model\'s tool calls in the choice, and a tool result sent back', async () => {
    standIn.answer = () => ({ text: '', toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Paris' } }] })
    const { output } = await client.callAction({
      type: 'other:generateContent',
      input: {
        model: { id: 'm2' }, messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'weather', description: 'The weather', argumentsSchema: { type: 'object', properties: { city: { type: 'string' } } } } }],
        toolChoice: { type: 'any' },
      },
    })
    expect(output.choices[0]).toMatchObject({ type: 'tool_calls', stopReason: 'tool_calls', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: { city: 'Paris' } } }] })
    expect(standIn.requests[0]!.body).toMatchObject({ tool_choice: 'required', tools: [{ type: 'function', function: { name: 'weather' } }] })
  })

  it('refusals: an unknown action (404), input that is not the interface\'s (400), a provider failure (Internal with UPSTREAM_PROVIDER_FAILED: what @botpress/client parses and cognitive\'s legacy path falls back on)', async () => {
    expect(await failure(client.callAction({ type: 'local:transcribe', input: {} }))).toMatchObject({ code: 404, type: 'ResourceNotFound', message: expect.stringContaining('generateContent, listLanguageModels') })
    expect(await failure(client.callAction({ type: 'local:generateContent', input: { messages: 'hi' } }))).toMatchObject({ code: 400, type: 'InvalidPayload', message: expect.stringContaining('input/messages must be array') })
    expect(await failure(client.callAction({ type: 'local:generateContent', input: { model: { id: 'nope' }, messages: [] } }))).toMatchObject({ code: 400, message: expect.stringContaining('local:nope') })
    standIn.answer = () => ({ fault: 'server-error' })
    expect(await failure(client.callAction({ type: 'local:generateContent', input: { model: { id: 'small' }, messages: [{ role: 'user', content: 'x' }] } })))
      .toMatchObject({ code: 500, type: 'Internal', metadata: { subtype: 'UPSTREAM_PROVIDER_FAILED' } })
  })
})
