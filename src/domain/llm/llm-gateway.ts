import { ApiError, errors } from '../../lib/errors.js'
import { uuidv7 } from '../../lib/ids.js'
import type { MetricsRegistry } from '../../lib/metrics.js'
import { ProviderError, type ChatMessage, type GenerationParams, type LlmProvider, type ProviderResult, type StopReason, type ToolCall } from './llm-provider.js'
import { LlmModels, type ConfiguredModel, type ModelView } from './llm-models.js'
import type { LlmSettings } from './llm-settings.js'
import type { LlmCallRecord, LlmCaller, LlmUsage } from './llm-usage.js'
import { ProviderSlots } from './provider-slots.js'

/** One generation as the gateway takes it, whichever API asked (the v2 cognitive API today). */
export interface GenerateInput extends GenerationParams {
  model: string | string[] | undefined
  messages: ChatMessage[]
  /** Request parameters this gateway has no use for (they become `parameter_ignored` warnings). */
  ignored: string[]
  meta?: { promptSource?: string; promptCategory?: string; integrationName?: string }
  /** The caller went away. */
  signal?: AbortSignal
}

export interface Warning {
  type: 'parameter_ignored' | 'provider_limitation' | 'fallback_used' | 'timeout'
  message: string
}

export interface GenerateMetadata {
  provider: string
  model: string
  usage: { inputTokens: number; inputCost: number; outputTokens: number; outputCost: number }
  cost: number
  latency: number
  ttft?: number
  stopReason: StopReason
  fallbackPath?: string[]
  warnings?: Warning[]
}

export interface GenerateOutput {
  output: string
  toolCalls: ToolCall[]
  metadata: GenerateMetadata
}

const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
const META_CHARS = 200

class CallTimeout extends Error {}

/**
 * The LLM gateway (docs/llm.md): resolves model ids and presets to configured providers, calls them in fallback order,
 * each within its own concurrency slots and timeout, and turns the answer into the cognitive metadata (usage, cost,
 * latency, ttft, warnings, fallbackPath). Every call is admitted and recorded through LlmUsage, failed ones too.
 */
export class LlmGateway {
  private readonly models: LlmModels
  private readonly slots = new Map<string, ProviderSlots>()
  private readonly calls
  private readonly duration

  constructor(
    private readonly settings: LlmSettings,
    private readonly providers: ReadonlyMap<string, LlmProvider>,
    readonly usage: LlmUsage,
    metrics: MetricsRegistry,
    private readonly log: { warn: (context: object, message: string) => void },
  ) {
    this.models = new LlmModels(settings)
    for (const p of settings.providers) this.slots.set(p.name, new ProviderSlots(p.name, p.concurrency, p.queue))
    // Labels are configured names only (never a request's string, never a key).
    // Tokens, cost and recorded calls are usage accounting's series (parley_llm_tokens_total…); these are the providers'.
    this.calls = metrics.counter('parley_llm_provider_calls_total', 'Calls to language model providers, by provider, model and outcome (ok, timeout, unreachable, upstream, malformed, rate_limited, busy, aborted)', ['provider', 'model', 'outcome'])
    this.duration = metrics.histogram('parley_llm_provider_call_duration_seconds', 'Wall time of a call to a language model provider, in seconds', DURATION_BUCKETS, ['provider'])
    metrics.collect('parley_llm_provider_calls_in_flight', 'Calls to language model providers in flight on this instance', () => this.load().inFlight)
    metrics.collect('parley_llm_provider_calls_queued', 'Calls waiting for a slot of their language model provider on this instance', () => this.load().queued)
  }

  /** Calls in flight and waiting for a slot, over every provider of this instance. */
  load(): { inFlight: number; queued: number } {
    let inFlight = 0
    let queued = 0
    for (const s of this.slots.values()) {
      inFlight += s.inFlight
      queued += s.queued
    }
    return { inFlight, queued }
  }

  get configured(): boolean {
    return this.models.all.length > 0
  }

  listModels(): ModelView[] {
    return this.models.views()
  }

  /** The smallest input context (in tokens) of the models `model` resolves to: what a prompt built for it must fit. */
  contextTokens(model: string | string[] | undefined): number {
    let models: ConfiguredModel[] = []
    try {
      models = this.configured ? this.models.resolve(model) : []
    } catch {
      // an unknown model: the call itself says so
    }
    return models.length === 0 ? 8_000 : Math.min(...models.map((m) => m.model.maxInputTokens))
  }

  /**
   * One generation. With `onDelta` the answer streams: once a piece went out no other model is tried, and a failure
   * rejects (the caller cuts its stream). Rejects with the ApiError of the last model's failure (502/503/504/429).
   */
  async generate(caller: LlmCaller, input: GenerateInput, via: LlmCallRecord['via'], onDelta?: (text: string) => void): Promise<GenerateOutput> {
    if (!this.configured) {
      throw errors.notFoundBecause('No language model provider is configured on this server: the operator sets PARLEY_LLM_URL (and PARLEY_LLM_MODELS) or PARLEY_LLM_PROVIDERS_FILE (docs/llm.md)')
    }
    const candidates = this.models.resolve(input.model)
    await this.usage.admit(caller)
    const warnings: Warning[] = input.ignored.map((name) => ({ type: 'parameter_ignored' as const, message: `${name} is not supported by this server and was ignored` }))
    const path: string[] = []
    let lastError: ProviderError | undefined
    for (const candidate of candidates) {
      path.push(candidate.id)
      const provider = this.providers.get(candidate.provider.name)!
      if (input.json && provider.ignores.has('json')) warnings.push({ type: 'parameter_ignored', message: `responseFormat json is not supported by ${candidate.provider.name}'s API and was ignored` })
      const max = provider.maxTemperature
      if (input.temperature !== undefined && max !== undefined && input.temperature > max) {
        warnings.push({ type: 'provider_limitation', message: `temperature ${input.temperature} is above ${candidate.provider.name}'s maximum of ${max}: ${max} was sent` })
      }
      let streamed = false
      const attempt = await this.call(caller, input, via, candidate, provider, onDelta && ((text) => {
        streamed = true
        onDelta(text)
      }))
      if ('result' in attempt) {
        if (path.length > 1) warnings.push({ type: 'fallback_used', message: `${path.slice(0, -1).join(', ')} failed; ${candidate.id} answered` })
        return this.output(candidate, attempt.result, attempt, path, warnings)
      }
      lastError = attempt.error
      if (streamed || input.signal?.aborted) break
    }
    throw toApiError(lastError!, path[path.length - 1]!)
  }

  private async call(
    caller: LlmCaller, input: GenerateInput, via: LlmCallRecord['via'], candidate: ConfiguredModel, provider: LlmProvider, onDelta: ((text: string) => void) | undefined,
  ): Promise<{ result: ProviderResult; latency: number; ttft?: number } | { error: ProviderError }> {
    const started = performance.now()
    let ttft: number | undefined
    const { timeoutMs } = candidate.provider
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new CallTimeout()), timeoutMs)
    const onCallerGone = () => controller.abort(input.signal!.reason)
    input.signal?.addEventListener('abort', onCallerGone, { once: true })
    let release: (() => void) | undefined
    let outcome: { result: ProviderResult } | { error: ProviderError }
    try {
      release = await this.slots.get(candidate.provider.name)!.acquire(controller.signal)
      const { model: _requested, ignored: _ignored, meta: _meta, signal: _signal, ...params } = input
      const result = await provider.generate({ ...params, model: candidate.model.name, signal: controller.signal }, onDelta && ((text) => {
        ttft ??= performance.now() - started
        onDelta(text)
      }))
      outcome = { result }
    } catch (err) {
      outcome = { error: this.providerError(err, controller.signal, timeoutMs, candidate) }
    } finally {
      clearTimeout(timer)
      input.signal?.removeEventListener('abort', onCallerGone)
      release?.()
    }
    const latency = performance.now() - started
    // recorded after the answer went out (LlmUsage.record does not hold it)
    this.record(caller, input, via, candidate, outcome, latency, ttft)
    return 'result' in outcome ? { ...outcome, latency, ...(ttft !== undefined && { ttft }) } : outcome
  }

  private providerError(err: unknown, signal: AbortSignal, timeoutMs: number, candidate: ConfiguredModel): ProviderError {
    if (signal.reason instanceof CallTimeout) return new ProviderError('timeout', `did not answer within ${timeoutMs} ms`)
    if (signal.aborted) return new ProviderError('upstream', 'call was abandoned: the caller went away')
    if (err instanceof ProviderError) return err
    // An adapter bug, not the provider: logged (without the request), answered as a provider failure.
    this.log.warn({ err, provider: candidate.provider.name, model: candidate.model.name }, 'llm: a provider call failed unexpectedly')
    return new ProviderError('malformed', 'answered something Parley could not read')
  }

  private record(caller: LlmCaller, input: GenerateInput, via: LlmCallRecord['via'], candidate: ConfiguredModel, outcome: { result: ProviderResult } | { error: ProviderError }, latency: number, ttft: number | undefined): void {
    const provider = candidate.provider.name
    const model = candidate.model.name
    const result = 'result' in outcome ? outcome.result : undefined
    const inputTokens = result?.inputTokens ?? 0
    const outputTokens = result?.outputTokens ?? 0
    const outcomeLabel = result ? 'ok' : input.signal?.aborted ? 'aborted' : (outcome as { error: ProviderError }).error.kind
    this.calls.inc({ provider, model, outcome: outcomeLabel })
    this.duration.observe(latency / 1000, { provider })
    const meta = input.meta ?? {}
    const record: LlmCallRecord = {
      ...caller, id: uuidv7(), provider, model, inputTokens, outputTokens,
      inputCost: cost(inputTokens, candidate.model.inputCostPer1M), outputCost: cost(outputTokens, candidate.model.outputCostPer1M),
      latencyMs: Math.round(latency), via, createdAt: Date.now(),
      ...(ttft !== undefined && { ttftMs: Math.round(ttft) }),
      ...(result && { stopReason: result.stopReason }),
      ...('error' in outcome && { error: `${outcome.error.kind}: ${outcome.error.message}` }),
      ...(typeof meta.promptSource === 'string' && { promptSource: meta.promptSource.slice(0, META_CHARS) }),
      ...(typeof meta.promptCategory === 'string' && { promptCategory: meta.promptCategory.slice(0, META_CHARS) }),
      ...(typeof meta.integrationName === 'string' && { integrationName: meta.integrationName.slice(0, META_CHARS) }),
    }
    this.usage.record(record)
  }

  private output(candidate: ConfiguredModel, result: ProviderResult, timing: { latency: number; ttft?: number }, path: string[], warnings: Warning[]): GenerateOutput {
    const inputCost = cost(result.inputTokens, candidate.model.inputCostPer1M)
    const outputCost = cost(result.outputTokens, candidate.model.outputCostPer1M)
    return {
      output: result.output,
      toolCalls: result.toolCalls,
      metadata: {
        provider: candidate.provider.name,
        model: candidate.id,
        usage: { inputTokens: result.inputTokens, inputCost, outputTokens: result.outputTokens, outputCost },
        cost: inputCost + outputCost,
        latency: Math.round(timing.latency),
        ...(timing.ttft !== undefined && { ttft: Math.round(timing.ttft) }),
        stopReason: result.stopReason,
        ...(path.length > 1 && { fallbackPath: path }),
        ...(warnings.length > 0 && { warnings }),
      },
    }
  }
}

function cost(tokens: number, per1M: number): number {
  return (tokens * per1M) / 1_000_000
}

/** The answer to a failed call: 502 (provider failed), 503 (its queue is full), 504 (timeout), 429 (its rate limit). */
function toApiError(err: ProviderError, id: string): ApiError {
  const message = `Model ${id}: the provider ${err.message}`
  switch (err.kind) {
    case 'timeout': return errors.timeout(message)
    case 'busy': return errors.endpointRefused(false, message, err.retryAfterSeconds ?? 1)
    case 'rate_limited': return errors.rateLimited(message, err.retryAfterSeconds ?? 1)
    default: return errors.providerFailed(message)
  }
}
