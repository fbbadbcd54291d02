import type { LlmProvider } from '../domain/llm/llm-provider.js'
import type { LlmSettings } from '../domain/llm/llm-settings.js'
import { AnthropicProvider } from './anthropic.js'
import { OpenAiCompatibleProvider } from './openai-compatible.js'

/** The adapters of the configured providers, by name (compose.ts hands them to the gateway). */
export function createProviders(settings: LlmSettings): Map<string, LlmProvider> {
  return new Map(settings.providers.map((p) => {
    const provider: LlmProvider = p.kind === 'anthropic'
      ? new AnthropicProvider(p.name, p.url, p.apiKey, settings.maxAnswerBytes, (model) => p.models.find((m) => m.name === model)?.maxOutputTokens ?? 4096)
      : new OpenAiCompatibleProvider(p.name, p.url, p.apiKey, settings.maxAnswerBytes)
    return [p.name, provider]
  }))
}
