/**
 * What the gateway (llm-gateway.ts) asks of a language model provider, whatever its wire: the adapters in src/llm/
 * (OpenAI-compatible chat completions, Anthropic Messages) implement `LlmProvider`; compose.ts builds them from the
 * configured providers. Issue #28; docs/llm.md.
 */

export type StopReason = 'stop' | 'max_tokens' | 'content_filter' | 'tool_calls' | 'other'

export interface ToolCall {
  id: string
  name: string
  input: Record<string, unknown>
}

export interface ContentPart {
  type: 'text' | 'image' | 'audio'
  text?: string
  url?: string
  mimeType?: string
}

/** One message as the gateway hands it to a provider: a tool result is its own role, system messages stay in order. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string | ContentPart[] | null
  /** An assistant message's tool calls. */
  toolCalls?: ToolCall[]
  /** A `tool` message: the call it answers. */
  toolCallId?: string
}

export interface ToolSpec {
  name: string
  description?: string
  /** JSON schema of the input. */
  parameters?: Record<string, unknown>
}

export type ToolChoice = { mode: 'auto' } | { mode: 'none' } | { mode: 'required' } | { mode: 'specific'; toolName: string }

/** What a generation asks of the model, beyond its messages (the same from a request to the provider call). */
export interface GenerationParams {
  maxTokens?: number
  temperature?: number
  stop?: string[]
  /** Answer a JSON object (OpenAI `response_format: {type: 'json_object'}`). */
  json?: boolean
  tools?: ToolSpec[]
  toolChoice?: ToolChoice
}

export interface ProviderRequest extends GenerationParams {
  /** The model's name at the provider (without the `provider:` prefix). */
  model: string
  messages: ChatMessage[]
  /** Aborted on the call's timeout or when the caller goes away. */
  signal: AbortSignal
}

export interface ProviderResult {
  output: string
  toolCalls: ToolCall[]
  stopReason: StopReason
  inputTokens: number
  outputTokens: number
}

/**
 * How a provider call failed. `unreachable` (no connection), `upstream` (a 5xx or a refusal of Parley's own request or
 * credentials), `malformed` (an answer that is not the wire, or past the size cap), `timeout`, `rate_limited` (its 429), `busy` (Parley's own queue for it is full).
 * The message is Parley's own: never the provider's body, which may echo a key.
 */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'unreachable' | 'upstream' | 'malformed' | 'timeout' | 'rate_limited' | 'busy',
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message)
    this.name = 'ProviderError'
  }
}

export interface LlmProvider {
  /** The provider's configured name (the prefix of its model ids). */
  readonly name: string
  /** Parameters this provider's wire has no place for (the gateway warns `parameter_ignored`). */
  readonly ignores: ReadonlySet<'json'>
  /** The highest temperature the provider takes (a higher one is sent as this, and the gateway warns `provider_limitation`). */
  readonly maxTemperature?: number
  /**
   * One call. With `onDelta`, the answer is streamed from the provider and each piece of text is handed over as it
   * comes; either way the promise settles with the whole result, or rejects with a ProviderError.
   */
  generate(request: ProviderRequest, onDelta?: (text: string) => void): Promise<ProviderResult>
}
