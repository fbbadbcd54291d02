import { errors } from '../../lib/errors.js'
import type { LlmModelSettings, LlmProviderSettings, LlmSettings } from './llm-settings.js'

/** One configured model: `provider:model`, where it is served and what it costs. */
export interface ConfiguredModel {
  id: string
  provider: LlmProviderSettings
  model: LlmModelSettings
}

/** The Model shape of `GET /v2/cognitive/models` (@botpress/cognitive's `Model`). */
export interface ModelView {
  id: string
  name: string
  description: string
  aliases: string[]
  tags: string[]
  input: { maxTokens: number; costPer1MTokens: number }
  output: { maxTokens: number; costPer1MTokens: number }
  lifecycle: 'production'
  capabilities: { supportsImages: boolean; supportsAudio: boolean; supportsTranscription: boolean; supportsSearch: boolean }
}

export const PRESETS = ['best', 'fast', 'auto'] as const

/** Model ids and presets → configured models (docs/llm.md "Model ids and presets"). */
export class LlmModels {
  readonly all: ConfiguredModel[]
  private readonly byId = new Map<string, ConfiguredModel>()
  private readonly presets: Record<(typeof PRESETS)[number], ConfiguredModel | undefined>

  constructor(settings: LlmSettings) {
    this.all = settings.providers.flatMap((provider) => provider.models.map((model) => ({ id: `${provider.name}:${model.name}`, provider, model })))
    for (const m of this.all) this.byId.set(m.id, m)
    const preset = (name: 'PARLEY_LLM_BEST' | 'PARLEY_LLM_FAST', id: string | undefined) => {
      if (id === undefined) return this.all[0]
      const found = this.byId.get(id)
      if (!found && this.all.length > 0) throw new Error(`${name} is "${id}", which is not a configured model; configured: ${this.all.map((m) => m.id).join(', ')}`)
      return found
    }
    const best = preset('PARLEY_LLM_BEST', settings.best)
    this.presets = { best, fast: preset('PARLEY_LLM_FAST', settings.fast), auto: best }
  }

  /**
   * The models a request names, in order (an array is a fallback list; undefined is `auto`). A bare name resolves
   * when exactly one provider serves it. 400 naming the configured ids for any other.
   */
  resolve(requested: string | string[] | undefined): ConfiguredModel[] {
    const ids = requested === undefined ? ['auto'] : Array.isArray(requested) ? requested : [requested]
    if (ids.length === 0) throw errors.invalidPayload('model: name at least one model')
    const resolved = ids.map((id) => {
      const found = this.presets[id as (typeof PRESETS)[number]] ?? this.byId.get(id) ?? this.bare(id)
      if (!found) {
        const known = this.all.slice(0, 30).map((m) => m.id).join(', ')
        throw errors.invalidPayload(`Model "${id.slice(0, 200)}" is not configured on this server; configured: ${known}${this.all.length > 30 ? ', …' : ''} (and the presets best, fast, auto)`)
      }
      return found
    })
    return resolved.filter((m, i) => resolved.indexOf(m) === i)
  }

  views(): ModelView[] {
    return this.all.map(({ id, provider, model }) => ({
      id,
      name: model.name,
      description: `${model.name}, served by ${provider.name} (${provider.kind === 'anthropic' ? 'Anthropic Messages API' : 'OpenAI-compatible API'})`,
      aliases: PRESETS.filter((p) => this.presets[p]?.id === id),
      tags: model.tags,
      input: { maxTokens: model.maxInputTokens, costPer1MTokens: model.inputCostPer1M },
      output: { maxTokens: model.maxOutputTokens, costPer1MTokens: model.outputCostPer1M },
      lifecycle: 'production',
      capabilities: { supportsImages: false, supportsAudio: false, supportsTranscription: false, supportsSearch: false },
    }))
  }

  private bare(name: string): ConfiguredModel | undefined {
    const matches = this.all.filter((m) => m.model.name === name)
    return matches.length === 1 ? matches[0] : undefined
  }
}
