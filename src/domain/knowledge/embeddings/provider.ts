/**
 * Embeddings providers: something that turns texts into vectors of one model. The one implementation speaks the
 * OpenAI-compatible `POST {url}/v1/embeddings` (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio…). Whatever the
 * service answers is checked before it is believed: an answer that is not a well-formed list of finite vectors of
 * one length, one per input, is an EmbeddingsError and nothing of it is kept.
 */

export interface EmbeddingsProvider {
  /** The model name vectors are stored under: a different name means different vectors. */
  readonly model: string
  /**
   * One vector per text, in order, all of the same length; `null` for a text the provider has nothing to say about
   * (the built-in one: no known word), searched lexically only. Throws EmbeddingsError.
   */
  embed(texts: string[], options: { timeoutMs: number; priority?: boolean }): Promise<(Float32Array | null)[]>
  /**
   * The text a passage is embedded by (default `passageText`: heading path and text); `priority`: a search's query,
   * served before the backfill's passages.
   */
  textOf?(passage: { title: string; content: string }): string
}

/**
 * - `unavailable`: the service could not answer (network, timeout, 429, 5xx, auth, unknown model): retry later;
 * - `invalid`: it answered something unusable (bad JSON, wrong count, NaN, mixed lengths, too large): retry later;
 * - `rejected`: it refused these inputs (400, 413, 422): retrying the same inputs will not help.
 */
export class EmbeddingsError extends Error {
  constructor(readonly kind: 'unavailable' | 'invalid' | 'rejected', message: string) {
    super(message)
    this.name = 'EmbeddingsError'
  }
}

/** No model has more dimensions than this (the largest common ones have 3072–4096). */
export const MAX_DIMENSIONS = 8192

export interface OpenAiEmbeddingsOptions {
  /** Base URL; `/v1/embeddings` is appended (a trailing `/v1` is accepted too). */
  url: string
  model: string
  apiKey?: string | undefined
  /** Largest answer read, in bytes (a hostile or broken service cannot make us buffer more). */
  maxResponseBytes?: number | undefined
}

export class OpenAiEmbeddings implements EmbeddingsProvider {
  readonly model: string
  private readonly endpoint: string

  constructor(private readonly options: OpenAiEmbeddingsOptions) {
    this.model = options.model
    this.endpoint = `${options.url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/embeddings`
  }

  async embed(texts: string[], { timeoutMs }: { timeoutMs: number }): Promise<Float32Array[]> {
    if (texts.length === 0) return []
    const signal = AbortSignal.timeout(timeoutMs)
    let res: Response
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey && { authorization: `Bearer ${this.options.apiKey}` }) },
        body: JSON.stringify({ model: this.model, input: texts }),
        signal,
      })
    } catch (err) {
      throw new EmbeddingsError('unavailable', `embeddings service unreachable: ${describe(err, timeoutMs)}`)
    }
    let text: string
    try {
      text = await readCapped(res, this.options.maxResponseBytes ?? maxBytesFor(texts.length))
    } catch (err) {
      throw new EmbeddingsError(err instanceof EmbeddingsError ? err.kind : 'unavailable', err instanceof EmbeddingsError ? err.message : `embeddings answer not read: ${describe(err, timeoutMs)}`)
    }
    if (!res.ok) {
      const kind = res.status === 400 || res.status === 413 || res.status === 422 ? 'rejected' : 'unavailable'
      throw new EmbeddingsError(kind, `embeddings service answered ${res.status}: ${text.slice(0, 200)}`)
    }
    return parseEmbeddings(text, texts.length)
  }
}

/** Generous for any real model: 8192 dimensions × ~24 characters per number, per input, plus 1 MB. */
const maxBytesFor = (inputs: number) => inputs * MAX_DIMENSIONS * 24 + 1024 * 1024

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      throw new EmbeddingsError('invalid', `embeddings answer larger than ${maxBytes} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err)
}

/** `{data: [{embedding: number[], index}], model}` checked item by item; any flaw rejects the whole answer. */
export function parseEmbeddings(text: string, count: number): Float32Array[] {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new EmbeddingsError('invalid', 'embeddings answer is not JSON')
  }
  const data = (body as { data?: unknown } | null)?.data
  if (!Array.isArray(data)) throw new EmbeddingsError('invalid', 'embeddings answer has no data array')
  if (data.length !== count) throw new EmbeddingsError('invalid', `embeddings answer has ${data.length} vectors for ${count} inputs`)
  const out: (Float32Array | undefined)[] = new Array(count)
  let dims: number | undefined
  data.forEach((item: unknown, i) => {
    const { embedding, index } = (item ?? {}) as { embedding?: unknown; index?: unknown }
    const at = index === undefined ? i : index
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= count || out[at]) throw new EmbeddingsError('invalid', `embeddings answer has a bad index at ${i}`)
    if (!Array.isArray(embedding) || embedding.length === 0 || embedding.length > MAX_DIMENSIONS) {
      throw new EmbeddingsError('invalid', `embeddings answer item ${i} is not a vector of 1 to ${MAX_DIMENSIONS} numbers`)
    }
    if (dims !== undefined && embedding.length !== dims) throw new EmbeddingsError('invalid', `embeddings answer mixes vectors of ${dims} and ${embedding.length} dimensions`)
    dims = embedding.length
    const v = new Float32Array(embedding.length)
    let norm = 0
    for (let j = 0; j < embedding.length; j++) {
      const x = embedding[j] as unknown
      if (typeof x !== 'number' || !Number.isFinite(x) || !Number.isFinite(Math.fround(x))) throw new EmbeddingsError('invalid', `embeddings answer item ${i} has a non-finite component`)
      v[j] = x
      norm += x * x
    }
    if (norm === 0 || !Number.isFinite(norm)) throw new EmbeddingsError('invalid', `embeddings answer item ${i} has no direction (zero or overflowing vector)`)
    out[at] = v
  })
  return out as Float32Array[]
}
