/**
 * The LLM providers' settings (docs/llm.md "Configure providers"): PARLEY_LLM_URL and the providers file, checked at
 * start-up with a message naming the file and the bad field, and never a key.
 */
import { writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { llmLabel, loadConfig } from '../../src/config.js'
import { LlmModels } from '../../src/domain/llm/llm-models.js'
import { providersFile } from '../helpers/llm-stand-in.js'

const SECRET = 'sk-very-SECRET-9999'
const load = (env: Record<string, string>) => loadConfig({ PARLEY_DATA_DIR: '/tmp/parley-unused', ...env })

describe('LLM provider settings', () => {
  it('PARLEY_LLM_URL: one provider named from the URL, its models, its key', () => {
    const names = ['http://127.0.0.1:11434/v1', 'https://api.openai.com/v1', 'http://10.0.0.5:8000/v1'].map((url) => load({ PARLEY_LLM_URL: url, PARLEY_LLM_MODELS: 'a, b', PARLEY_LLM_API_KEY: SECRET }).llm.providers[0]!)
    expect(names.map((p) => p.name)).toEqual(['ollama', 'openai', 'openai-compatible'])
    expect(names[0]).toMatchObject({ kind: 'openai', url: 'http://127.0.0.1:11434/v1', apiKey: SECRET, models: [{ name: 'a', inputCostPer1M: 0 }, { name: 'b' }] })
    expect(() => load({ PARLEY_LLM_URL: 'http://127.0.0.1:11434/v1' })).toThrow(/PARLEY_LLM_MODELS is required/)
    expect(load({}).llm.providers).toEqual([])
    // The start-up banner's line: names and counts, no URL or key.
    expect(llmLabel(load({ PARLEY_LLM_URL: 'http://127.0.0.1:11434/v1', PARLEY_LLM_MODELS: 'a,b', PARLEY_LLM_API_KEY: SECRET }))).toBe('ollama (2 models)')
    expect(llmLabel(load({}))).toMatch(/^none \(set PARLEY_LLM_URL/)
  })

  it('the providers file: apiKeyEnv, defaults from the settings, per-provider limits', () => {
    const file = providersFile([
      { name: 'a', kind: 'anthropic', url: 'https://api.anthropic.com/v1/', apiKeyEnv: 'MY_KEY', models: [{ name: 'm', inputCostPer1M: 3 }], timeoutMs: 500 },
      { name: 'b', url: 'http://127.0.0.1:1/v1', models: ['x'] },
    ])
    const { providers } = load({ PARLEY_LLM_PROVIDERS_FILE: file, MY_KEY: SECRET, PARLEY_LLM_CONCURRENCY: '3' }).llm
    expect(providers[0]).toMatchObject({ name: 'a', kind: 'anthropic', url: 'https://api.anthropic.com/v1', apiKey: SECRET, timeoutMs: 500, concurrency: 3, models: [{ name: 'm', inputCostPer1M: 3 }] })
    expect(providers[1]).toMatchObject({ kind: 'openai', apiKey: undefined, timeoutMs: 120_000, queue: 32 })
  })

  it('a bad file stops the start with the file and the field named, never the key', () => {
    const cases: [unknown, RegExp][] = [
      [{ providers: [] }, /providers is empty/],
      [{ providers: [{ name: 'a b', url: 'http://x/v1', models: ['m'] }] }, /providers\[0\]\.name must be/],
      [{ providers: [{ name: 'a', kind: 'gemini', url: 'http://x/v1', models: ['m'] }] }, /providers\[0\]\.kind must be "openai"/],
      [{ providers: [{ name: 'a', url: 'ftp://x', models: ['m'], apiKey: SECRET }] }, /providers\[0\]\.url must be an http\(s\) base URL/],
      [{ providers: [{ name: 'a', url: 'http://x/v1', apiKey: SECRET, models: [{ name: 'm', outputCostPer1M: -1 }] }] }, /providers\[0\]\.models\[0\]\.outputCostPer1M must be a number ≥ 0/],
      [{ providers: [{ name: 'a', url: 'http://x/v1', apiKeyEnv: 'UNSET_KEY_VAR', models: ['m'] }] }, /providers\[0\]\.apiKeyEnv names UNSET_KEY_VAR, which is not set/],
      [{ providers: [{ name: 'a', url: 'http://x/v1', models: ['m'] }, { name: 'a', url: 'http://y/v1', models: ['n'] }] }, /providers\[1\]\.name "a" is used twice/],
      [{ providers: [{ name: 'a', url: 'http://x/v1', models: ['m'], concurrency: 0 }] }, /providers\[0\]\.concurrency must be an integer ≥ 1/],
    ]
    for (const [json, message] of cases) {
      const file = providersFile([])
      writeFileSync(file, JSON.stringify(json))
      let error: Error | undefined
      try { load({ PARLEY_LLM_PROVIDERS_FILE: file }) } catch (err) { error = err as Error }
      expect(error?.message, JSON.stringify(json)).toMatch(message)
      expect(error!.message).toContain(file)
      expect(error!.message).not.toContain(SECRET)
    }
    const file = providersFile([])
    writeFileSync(file, `{"providers": [{"apiKey": "${SECRET}",`)
    expect(() => load({ PARLEY_LLM_PROVIDERS_FILE: file })).toThrow(/not valid JSON/)
    expect(() => load({ PARLEY_LLM_PROVIDERS_FILE: `${file}.missing` })).toThrow(/no such file/)
  })

  it('PARLEY_LLM_BEST / _FAST must name a configured model', () => {
    const llm = load({ PARLEY_LLM_URL: 'http://127.0.0.1:11434/v1', PARLEY_LLM_MODELS: 'a,b', PARLEY_LLM_FAST: 'ollama:b', PARLEY_LLM_BEST: 'ollama:nope' }).llm
    expect(() => new LlmModels(llm)).toThrow(/PARLEY_LLM_BEST is "ollama:nope", which is not a configured model; configured: ollama:a, ollama:b/)
    const models = new LlmModels({ ...llm, best: undefined })
    expect(models.resolve(['best', 'fast', 'auto']).map((m) => m.id)).toEqual(['ollama:a', 'ollama:b'])
  })
})

describe('knowledge answers\' model (PARLEY_KB_ANSWER_*)', () => {
  const url = 'http://127.0.0.1:11434/v1'

  it('off without a provider; `best` of the gateway by default; a model of its own; `off`', () => {
    expect(load({}).kbAnswer).toBeUndefined()
    expect(load({ PARLEY_LLM_URL: url, PARLEY_LLM_MODELS: 'llama3.2' }).kbAnswer).toEqual({ model: 'best', timeoutMs: 15_000 })
    expect(load({ PARLEY_LLM_URL: url, PARLEY_LLM_MODELS: 'llama3.2,qwen2.5', PARLEY_KB_ANSWER_MODEL: 'ollama:qwen2.5', PARLEY_KB_ANSWER_TIMEOUT_MS: '4000' }).kbAnswer).toEqual({ model: 'ollama:qwen2.5', timeoutMs: 4000 })
    expect(load({ PARLEY_LLM_URL: url, PARLEY_LLM_MODELS: 'llama3.2', PARLEY_KB_ANSWER_MODEL: 'off' }).kbAnswer).toBeUndefined()
  })

  it('PARLEY_KB_ANSWER_URL adds the provider kb-answer (its key, model and timeout) beside the gateway\'s own', () => {
    const config = load({ PARLEY_LLM_URL: url, PARLEY_LLM_MODELS: 'llama3.2', PARLEY_KB_ANSWER_URL: 'https://api.example.com/v1', PARLEY_KB_ANSWER_API_KEY: 'sk-kb', PARLEY_KB_ANSWER_TIMEOUT_MS: '5000' })
    expect(config.kbAnswer).toEqual({ model: 'kb-answer:gpt-4o-mini', timeoutMs: 5000 })
    expect(config.llm.providers.map((p) => p.name)).toEqual(['ollama', 'kb-answer'])
    expect(config.llm.providers[1]).toMatchObject({ kind: 'openai', url: 'https://api.example.com/v1', apiKey: 'sk-kb', timeoutMs: 5000, models: [{ name: 'gpt-4o-mini' }] })
    // A providers file that names kb-answer already: the two would be one name for two providers.
    const file = providersFile([{ name: 'kb-answer', kind: 'openai', url, models: ['m'] }])
    expect(() => load({ PARLEY_LLM_PROVIDERS_FILE: file, PARLEY_KB_ANSWER_URL: url })).toThrow(/PARLEY_KB_ANSWER_URL adds the provider "kb-answer", which PARLEY_LLM_PROVIDERS_FILE names already/)
  })
})
