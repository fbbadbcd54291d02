/**
 * The operator's language model providers (docs/llm.md "Configure providers"): one OpenAI-compatible URL
 * (PARLEY_LLM_URL, PARLEY_LLM_MODELS) or a JSON file of several (PARLEY_LLM_PROVIDERS_FILE), checked here at start-up
 * with a message naming the file and the bad field (never a key's value). src/config.ts reads the file and the
 * environment; this module only checks what it is given.
 */

export interface LlmModelSettings {
  name: string
  /** USD per million tokens (0 by default). */
  inputCostPer1M: number
  outputCostPer1M: number
  maxInputTokens: number
  maxOutputTokens: number
  tags: string[]
}

export interface LlmProviderSettings {
  name: string
  kind: 'openai' | 'anthropic'
  /** Base URL, no trailing slash (`…/v1`): Parley posts to `{url}/chat/completions` or `{url}/messages`. */
  url: string
  apiKey: string | undefined
  models: LlmModelSettings[]
  /** Calls in flight to this provider at once (per instance), and calls that may wait for one; more are refused (503). */
  concurrency: number
  queue: number
  /** Wall time of one call to this provider, in ms. */
  timeoutMs: number
}

export interface LlmSettings {
  providers: LlmProviderSettings[]
  /** The `best` / `fast` presets (`provider:model`); `auto` is `best`. Unset: the first configured model. */
  best: string | undefined
  fast: string | undefined
  /** The largest provider answer read, in bytes (past it the call fails: 502). */
  maxAnswerBytes: number
  /** The v2 cognitive API's JSON body limit, in bytes. */
  bodyLimit: number
}

/** Defaults a provider of the file takes from the settings. */
export interface ProviderDefaults {
  concurrency: number
  queue: number
  timeoutMs: number
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/i

function defaultModel(name: string): LlmModelSettings {
  return { name, inputCostPer1M: 0, outputCostPer1M: 0, maxInputTokens: 128_000, maxOutputTokens: 4_096, tags: [] }
}

/**
 * The one provider of PARLEY_LLM_URL: `openai` when the URL is OpenAI's own API, `ollama` on Ollama's port (11434),
 * else `openai-compatible`.
 */
export function providerFromUrl(url: string, apiKey: string | undefined, models: string[], defaults: ProviderDefaults): LlmProviderSettings {
  const { hostname, port } = new URL(url)
  const name = hostname === 'api.openai.com' ? 'openai' : port === '11434' ? 'ollama' : 'openai-compatible'
  const names = models.map((m) => m.trim()).filter((m) => m !== '')
  if (names.length === 0) throw new Error('PARLEY_LLM_MODELS is required with PARLEY_LLM_URL: the comma-separated model names served there (e.g. llama3.2,qwen2.5)')
  return { name, kind: 'openai', url, apiKey, models: names.map(defaultModel), ...defaults }
}

/**
 * Checks the parsed providers file. `env` resolves `apiKeyEnv`. Throws an Error naming the file and the field
 * (`providers[1].models[0].inputCostPer1M`), never a value that may be a key.
 */
export function parseProvidersFile(json: unknown, file: string, env: (name: string) => string | undefined, defaults: ProviderDefaults): LlmProviderSettings[] {
  const fail = (field: string, what: string): never => {
    throw new Error(`PARLEY_LLM_PROVIDERS_FILE ${file}: ${field} ${what}`)
  }
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json.providers) ? json.providers : fail('(top level)', 'must be an array of providers or { "providers": [...] }')
  if (list.length === 0) fail('providers', 'is empty: name at least one provider')
  const seen = new Set<string>()
  return list.map((raw: unknown, i: number) => {
    const at = `providers[${i}]`
    if (!isObject(raw)) return fail(at, 'must be an object')
    const name = raw.name
    if (typeof name !== 'string' || !NAME.test(name)) return fail(`${at}.name`, 'must be 1-64 letters, digits, ".", "_" or "-" (it prefixes model ids: name:model)')
    if (seen.has(name)) fail(`${at}.name`, `"${name}" is used twice`)
    seen.add(name)
    const kind = raw.kind ?? 'openai'
    if (kind !== 'openai' && kind !== 'anthropic') return fail(`${at}.kind`, 'must be "openai" (any OpenAI-compatible chat completions API) or "anthropic"')
    const url = raw.url
    let parsed: URL | undefined
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined
    } catch { /* reported below */ }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return fail(`${at}.url`, 'must be an http(s) base URL (e.g. http://127.0.0.1:11434/v1 or https://api.anthropic.com/v1)')
    if (raw.apiKey !== undefined && typeof raw.apiKey !== 'string') fail(`${at}.apiKey`, 'must be a string')
    if (raw.apiKeyEnv !== undefined && typeof raw.apiKeyEnv !== 'string') fail(`${at}.apiKeyEnv`, 'must be the name of an environment variable')
    const apiKey = typeof raw.apiKey === 'string' ? raw.apiKey : typeof raw.apiKeyEnv === 'string' ? env(raw.apiKeyEnv) : undefined
    if (typeof raw.apiKeyEnv === 'string' && !apiKey) fail(`${at}.apiKeyEnv`, `names ${raw.apiKeyEnv}, which is not set`)
    if (!Array.isArray(raw.models) || raw.models.length === 0) return fail(`${at}.models`, 'must be a non-empty array of { name, inputCostPer1M?, outputCostPer1M?, maxInputTokens?, maxOutputTokens?, tags? }')
    const models = raw.models.map((m: unknown, j: number) => parseModel(m, `${at}.models[${j}]`, fail))
    return {
      name, kind, url: (url as string).trim().replace(/\/+$/, ''), apiKey, models,
      concurrency: positive(raw.concurrency, `${at}.concurrency`, defaults.concurrency, fail),
      queue: positive(raw.queue, `${at}.queue`, defaults.queue, fail, 0),
      timeoutMs: positive(raw.timeoutMs, `${at}.timeoutMs`, defaults.timeoutMs, fail, 10),
    }
  })
}

function parseModel(raw: unknown, at: string, fail: (field: string, what: string) => never): LlmModelSettings {
  if (typeof raw === 'string') raw = { name: raw }
  if (!isObject(raw)) return fail(at, 'must be an object { name, … } or a model name')
  if (typeof raw.name !== 'string' || raw.name.trim() === '' || raw.name.length > 200) return fail(`${at}.name`, 'must be the model name the provider serves')
  const model = defaultModel(raw.name)
  for (const field of ['inputCostPer1M', 'outputCostPer1M'] as const) {
    const v = raw[field]
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) fail(`${at}.${field}`, 'must be a number ≥ 0 (USD per million tokens)')
    if (typeof v === 'number') model[field] = v
  }
  model.maxInputTokens = positive(raw.maxInputTokens, `${at}.maxInputTokens`, model.maxInputTokens, fail)
  model.maxOutputTokens = positive(raw.maxOutputTokens, `${at}.maxOutputTokens`, model.maxOutputTokens, fail)
  if (raw.tags !== undefined && (!Array.isArray(raw.tags) || raw.tags.some((t) => typeof t !== 'string'))) fail(`${at}.tags`, 'must be an array of strings')
  model.tags = (raw.tags as string[] | undefined) ?? []
  return model
}

function positive(v: unknown, field: string, fallback: number, fail: (field: string, what: string) => never, min = 1): number {
  if (v === undefined) return fallback
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) return fail(field, `must be an integer ≥ ${min}`)
  return v
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
