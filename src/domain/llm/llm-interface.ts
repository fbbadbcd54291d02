/**
 * Botpress's `llm` interface (llm-wire.md §1.8) on the gateway, for the default path of today's `@botpress/cognitive`
 * and `zai` with a plain `@botpress/client` Client: each configured provider shows as a built-in integration named
 * after it (getBot's integrations, `registered`), whose actions are the interface's `generateContent` and
 * `listLanguageModels`, called with `callAction('<provider>:generateContent')`. A model `<provider>:<model>` of the
 * legacy path is then the gateway's own id. A bot's own integration of the same name wins (it is the one called).
 * docs/llm.md "The llm interface".
 */
import { Ajv, type ValidateFunction } from 'ajv'
import { Type } from 'typebox'
import { ApiError, errors } from '../../lib/errors.js'
import { uuidv7 } from '../../lib/ids.js'
import type { BotRow, JsonObject } from '../../store/store.js'
import type { GenerateInput, LlmGateway } from './llm-gateway.js'
import type { ContentPart, ToolChoice } from './llm-provider.js'
import { callMeta, chatMessages } from './cognitive-v2.js'

/** The interface's version the integrations say they implement (botpress/botpress interfaces/llm). */
export const LLM_INTERFACE_VERSION = '11.0.0'
export const LLM_ACTIONS = ['generateContent', 'listLanguageModels'] as const

const open = { additionalProperties: true }
const Content = Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String({ maxLength: 50 }) }, open), { maxItems: 1000 }), Type.Null()])
/** generateContent's input: the keys read are checked (the interface's types), others are ignored (zai sends `signal: {}`). */
const GenerateContentInput = Type.Object({
  model: Type.Optional(Type.Object({ id: Type.String({ minLength: 1, maxLength: 300 }) }, open)),
  systemPrompt: Type.Optional(Type.String()),
  messages: Type.Array(Type.Object({
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    type: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('tool_calls'), Type.Literal('tool_result'), Type.Literal('multipart')])),
    content: Type.Optional(Content),
    toolCalls: Type.Optional(Type.Array(Type.Object({
      id: Type.String({ maxLength: 500 }), function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), arguments: Type.Optional(Type.Union([Type.Object({}, open), Type.Null()])) }, open),
    }, open), { maxItems: 128 })),
    toolResultCallId: Type.Optional(Type.String({ maxLength: 500 })),
  }, open), { maxItems: 10_000 }),
  responseFormat: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('json_object')])),
  maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  stopSequences: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 16 })),
  tools: Type.Optional(Type.Array(Type.Object({
    function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), description: Type.Optional(Type.String()), argumentsSchema: Type.Optional(Type.Object({}, open)) }, open),
  }, open), { maxItems: 128 })),
  toolChoice: Type.Optional(Type.Object({ type: Type.Optional(Type.String({ maxLength: 20 })), functionName: Type.Optional(Type.String({ maxLength: 200 })) }, open)),
  userId: Type.Optional(Type.String({ maxLength: 200 })),
  meta: Type.Optional(Type.Object({}, open)),
}, open)

type Message = { role: 'user' | 'assistant'; type?: string; content?: string | ContentPart[] | null; toolCalls?: { id: string; function: { name: string; arguments?: object | null } }[]; toolResultCallId?: string }
interface ContentInput {
  model?: { id: string }
  systemPrompt?: string
  messages: Message[]
  responseFormat?: 'text' | 'json_object'
  maxTokens?: number
  temperature?: number
  topP?: number
  stopSequences?: string[]
  tools?: { function: { name: string; description?: string; argumentsSchema?: object } }[]
  toolChoice?: { type?: string; functionName?: string }
  userId?: string
  meta?: { promptSource?: unknown; promptCategory?: unknown; integrationName?: unknown }
}

const validateInput: ValidateFunction = new Ajv({ allErrors: false, strict: false }).compile(GenerateContentInput)

function checked<T>(type: string, validate: ValidateFunction, input: unknown): T {
  if (validate(input)) return input as T
  const problem = (validate.errors ?? []).map((e) => `input${e.instancePath} ${e.message}`).join(', ')
  throw errors.invalidPayload(`input of action "${type}" does not match its schema: ${problem}`)
}

export class LlmInterface {
  constructor(private readonly gateway: LlmGateway) {}

  /** The providers shown as integrations implementing the interface (configured ones, in their order). */
  providers(): string[] {
    return [...new Set(this.gateway.listModels().map((m) => m.id.slice(0, m.id.indexOf(':'))))]
  }

  /** Whether `alias` names a provider shown as an integration. */
  handles(alias: string): boolean {
    return this.providers().includes(alias)
  }

  /** `callAction('<provider>:<action>')` of the bot. */
  async call(bot: BotRow, provider: string, action: string, input: JsonObject): Promise<JsonObject> {
    const type = `${provider}:${action}`.slice(0, 300)
    if (action === 'listLanguageModels') return { models: this.models(provider) }
    if (action !== 'generateContent') {
      throw errors.notFoundBecause(`Action "${type}" not found: the built-in ${provider} integration (the llm interface) has the actions ${LLM_ACTIONS.join(', ')}`)
    }
    const body = checked<ContentInput>(type, validateInput, input)
    const result = await this.gateway.generate(
      { workspaceId: bot.workspaceId, botId: bot.id, ...(body.userId !== undefined && { userId: body.userId }) },
      this.generateInput(provider, body),
      'llm-interface',
    ).catch((err: unknown) => {
      // A provider that failed or timed out: the legacy client falls back to its next model on this error only.
      if (err instanceof ApiError && (err.metadata?.subtype === 'UPSTREAM_PROVIDER_FAILED' || err.type === 'OperationTimeout')) throw errors.providerFailedInterface(err.message)
      throw err
    })
    const { metadata } = result
    const toolCalls = result.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.input } }))
    const output = {
      id: uuidv7(),
      provider: metadata.provider,
      model: metadata.model.slice(metadata.provider.length + 1),
      choices: [{
        type: toolCalls.length > 0 ? 'tool_calls' : 'text', ...(toolCalls.length > 0 && { toolCalls }),
        content: result.output, role: 'assistant', index: 0, stopReason: metadata.stopReason,
      }],
      usage: metadata.usage,
      botpress: { cost: metadata.cost },
    }
    return output as unknown as JsonObject
  }

  /** listLanguageModels: the provider's models, their ids without the provider (the client prefixes the integration's name). */
  private models(provider: string): JsonObject[] {
    return this.gateway.listModels().filter((m) => m.id.startsWith(`${provider}:`)).map((m) => ({
      id: m.name, name: m.name, description: m.description, tags: m.tags, input: m.input, output: m.output,
    }))
  }

  private generateInput(provider: string, body: ContentInput): GenerateInput {
    const choice = body.toolChoice?.type
    const toolChoice: ToolChoice | undefined = choice === 'specific' ? { mode: 'specific', toolName: body.toolChoice?.functionName ?? '' }
      : choice === 'any' ? { mode: 'required' } : choice === 'none' ? { mode: 'none' } : choice === 'auto' ? { mode: 'auto' } : undefined
    // The provider's first model when none is named (the interface's model is optional).
    const model = body.model ? `${provider}:${body.model.id}` : this.gateway.listModels().find((m) => m.id.startsWith(`${provider}:`))?.id
    return {
      model,
      messages: chatMessages(body.systemPrompt, body.messages),
      ...(body.maxTokens !== undefined && { maxTokens: body.maxTokens }),
      ...(body.temperature !== undefined && { temperature: body.temperature }),
      ...(body.stopSequences && body.stopSequences.length > 0 && { stop: body.stopSequences }),
      ...(body.responseFormat === 'json_object' && { json: true }),
      ...(body.tools && body.tools.length > 0 && {
        tools: body.tools.map((t) => ({ name: t.function.name, ...(t.function.description !== undefined && { description: t.function.description }), ...(t.function.argumentsSchema !== undefined && { parameters: t.function.argumentsSchema as Record<string, unknown> }) })),
      }),
      ...(toolChoice && { toolChoice }),
      ignored: body.topP !== undefined && body.topP !== 1 ? ['topP'] : [],
      meta: callMeta(body.meta),
    }
  }
}

/** A provider as bot.integrations[<provider>] shows it in getBot: a built-in integration implementing `llm`, registered. */
export function llmIntegrationView(provider: string, at: string) {
  return {
    id: `parley-llm-${provider}`, name: provider, version: LLM_INTERFACE_VERSION, enabled: true, webhookId: '', webhookUrl: '',
    configurationType: null, configuration: {}, status: 'registered' as const, statusReason: null, disabledChannels: [],
    createdAt: at, updatedAt: at, title: `${provider} (language models)`,
    description: `Parley's LLM gateway: the models of the ${provider} provider through the llm interface (generateContent, listLanguageModels)`,
    iconUrl: '', public: true, visibility: 'public' as const, verificationStatus: 'approved' as const, lifecycleStatus: 'published' as const,
  }
}
