import type { GenerateInput, GenerateOutput } from './llm-gateway.js'
import type { ChatMessage, ContentPart, ToolChoice } from './llm-provider.js'

/**
 * The v2 cognitive API's request (`@botpress/cognitive` `CognitiveRequest`, llm-wire.md §1.3) as the gateway takes it,
 * and its answer. Keys the gateway has no use for are ignored (zai sends `signal: {}`, `meta`, legacy fields).
 */
export interface CognitiveRequest {
  messages: {
    role: 'user' | 'assistant' | 'system'
    content?: string | ContentPart[] | null
    type?: string
    toolCalls?: { id: string; type?: string; function: { name: string; arguments?: object | null } }[]
    toolResultCallId?: string
  }[]
  model?: string | string[]
  systemPrompt?: string
  temperature?: number
  maxTokens?: number
  stopSequences?: string | string[]
  responseFormat?: string
  reasoningEffort?: string
  search?: unknown
  tools?: { name: string; description?: string; parameters?: object }[]
  toolControl?: { mode: 'auto' | 'none' | 'required' | 'specific'; toolName?: string }
  meta?: object
}

/**
 * Botpress's messages (the v2 request's, and the `llm` interface's) as the gateway's: systemPrompt becomes a leading
 * system message, tool results their own role, an assistant's tool calls their arguments as the input.
 */
export function chatMessages(systemPrompt: string | undefined, input: CognitiveRequest['messages']): ChatMessage[] {
  const messages: ChatMessage[] = []
  if (systemPrompt) messages.push({ role: 'system', content: systemPrompt })
  for (const m of input) {
    const content = m.content ?? null
    if (m.type === 'tool_result' || m.toolResultCallId !== undefined) {
      messages.push({ role: 'tool', content, toolCallId: m.toolResultCallId ?? '' })
    } else if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      messages.push({ role: 'assistant', content, toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.function.name, input: (c.function.arguments ?? {}) as Record<string, unknown> })) })
    } else {
      messages.push({ role: m.role, content })
    }
  }
  return messages
}

/** The request's `meta` strings recorded with the call (anything else in it is ignored). */
export function callMeta(meta: object | undefined): NonNullable<GenerateInput['meta']> {
  const m = (meta ?? {}) as { promptSource?: unknown; promptCategory?: unknown; integrationName?: unknown }
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined)
  return { promptSource: text(m.promptSource), promptCategory: text(m.promptCategory), integrationName: text(m.integrationName) }
}

/** The request as the gateway's input. */
export function generateInput(body: CognitiveRequest, signal: AbortSignal): GenerateInput {
  const messages = chatMessages(body.systemPrompt, body.messages)
  const ignored = [
    ...(body.reasoningEffort !== undefined && body.reasoningEffort !== 'none' ? ['reasoningEffort'] : []),
    ...(body.search !== undefined && body.search !== false ? ['search'] : []),
  ]
  const control = body.toolControl
  const stop = body.stopSequences === undefined ? [] : typeof body.stopSequences === 'string' ? [body.stopSequences] : body.stopSequences
  const toolChoice: ToolChoice | undefined = !control ? undefined
    : control.mode === 'specific' ? { mode: 'specific', toolName: control.toolName ?? '' }
    : { mode: control.mode }
  return {
    model: body.model,
    messages,
    ...(body.maxTokens !== undefined && { maxTokens: body.maxTokens }),
    ...(body.temperature !== undefined && { temperature: body.temperature }),
    ...(stop.length > 0 && { stop }),
    ...((body.responseFormat === 'json' || body.responseFormat === 'json_object') && { json: true }),
    ...(body.tools && body.tools.length > 0 && { tools: body.tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), ...(t.parameters !== undefined && { parameters: t.parameters as Record<string, unknown> }) })) }),
    ...(toolChoice && { toolChoice }),
    ignored,
    meta: callMeta(body.meta),
    signal,
  }
}

/** `CognitiveResponse`: toolCalls only when the model called tools. */
export function cognitiveResponse(result: GenerateOutput): Record<string, unknown> {
  return { output: result.output, ...(result.toolCalls.length > 0 && { toolCalls: result.toolCalls }), metadata: result.metadata }
}

/** The last NDJSON line of a stream: no more output, the tool calls, `finished` and the metadata. */
export function finalStreamChunk(result: GenerateOutput): Record<string, unknown> {
  return { output: '', created: Date.now(), finished: true, toolCalls: result.toolCalls, metadata: result.metadata }
}
