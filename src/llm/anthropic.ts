import { ProviderError, type ChatMessage, type LlmProvider, type ProviderRequest, type ProviderResult, type StopReason } from '../domain/llm/llm-provider.js'
import { count, messageText, parseJsonLine, postJson, readJson, type ProviderResponse, sseData, toolInput } from './provider-http.js'

const VERSION = '2023-06-01'

/**
 * Anthropic's Messages API: `POST {url}/messages` with `x-api-key` and `anthropic-version`; system messages go in
 * `system`, tool calls are `tool_use` blocks, tool results `tool_result` blocks of a user message. Streamed as SSE
 * (message_start, content_block_start/delta, message_delta, message_stop). It has no JSON mode (ignored, with a warning).
 */
export class AnthropicProvider implements LlmProvider {
  readonly ignores = new Set<'json'>(['json'])
  /** The Messages API takes a temperature from 0 to 1 (OpenAI's go to 2). */
  readonly maxTemperature = 1

  constructor(
    readonly name: string,
    private readonly url: string,
    private readonly apiKey: string | undefined,
    private readonly maxAnswerBytes: number,
    /** `max_tokens` is required by the API: the model's configured maxOutputTokens when the request has none. */
    private readonly defaultMaxTokens: (model: string) => number,
  ) {}

  async generate(request: ProviderRequest, onDelta?: (text: string) => void): Promise<ProviderResult> {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => messageText(m.content)).join('\n\n')
    const body = {
      model: request.model,
      max_tokens: request.maxTokens ?? this.defaultMaxTokens(request.model),
      ...(system !== '' && { system }),
      messages: wireMessages(request.messages.filter((m) => m.role !== 'system')),
      ...(request.temperature !== undefined && { temperature: Math.min(request.temperature, this.maxTemperature) }),
      ...(request.stop && { stop_sequences: request.stop }),
      ...(request.tools && { tools: request.tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), input_schema: t.parameters ?? { type: 'object', properties: {} } })) }),
      ...(request.toolChoice && request.toolChoice.mode !== 'none' && {
        tool_choice: request.toolChoice.mode === 'specific' ? { type: 'tool', name: request.toolChoice.toolName } : { type: request.toolChoice.mode === 'required' ? 'any' : 'auto' },
      }),
      ...(onDelta && { stream: true }),
    }
    const headers: Record<string, string> = { 'anthropic-version': VERSION, ...(this.apiKey && { 'x-api-key': this.apiKey }) }
    const res = await postJson(`${this.url}/messages`, headers, body, request.signal)
    return onDelta ? this.readStream(res, onDelta) : this.readAnswer(res)
  }

  private async readAnswer(res: ProviderResponse): Promise<ProviderResult> {
    const answer = (await readJson(res, this.maxAnswerBytes)) as { content?: unknown; stop_reason?: unknown; usage?: Record<string, unknown> }
    if (!Array.isArray(answer?.content)) throw new ProviderError('malformed', 'answered without content blocks')
    const blocks = answer.content as { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }[]
    return {
      output: blocks.filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text).join(''),
      toolCalls: blocks.filter((b) => b.type === 'tool_use').map((b, i) => ({ id: typeof b.id === 'string' ? b.id : `toolu_${i}`, name: String(b.name ?? ''), input: toolInput(b.input) })),
      stopReason: stopReason(answer.stop_reason),
      inputTokens: count(answer.usage?.input_tokens),
      outputTokens: count(answer.usage?.output_tokens),
    }
  }

  private async readStream(res: ProviderResponse, onDelta: (text: string) => void): Promise<ProviderResult> {
    let output = ''
    let inputTokens = 0
    let outputTokens = 0
    let finish: unknown
    let stopped = false
    const blocks = new Map<number, { id: string; name: string; json: string }>()
    for await (const data of sseData(res, this.maxAnswerBytes)) {
      const event = parseJsonLine(data) as { type?: unknown; index?: unknown; message?: { usage?: Record<string, unknown> }; content_block?: { type?: unknown; id?: unknown; name?: unknown }; delta?: Record<string, unknown>; usage?: Record<string, unknown> }
      const index = typeof event.index === 'number' ? event.index : -1
      switch (event.type) {
        case 'message_start':
          inputTokens = count(event.message?.usage?.input_tokens)
          break
        case 'content_block_start':
          if (event.content_block?.type === 'tool_use') blocks.set(index, { id: String(event.content_block.id ?? `toolu_${index}`), name: String(event.content_block.name ?? ''), json: '' })
          break
        case 'content_block_delta':
          if (event.delta?.type === 'text_delta' && typeof event.delta.text === 'string') {
            output += event.delta.text
            onDelta(event.delta.text)
          } else if (event.delta?.type === 'input_json_delta' && typeof event.delta.partial_json === 'string') {
            const block = blocks.get(index)
            if (block) block.json += event.delta.partial_json
          }
          break
        case 'message_delta':
          if (event.delta?.stop_reason !== undefined) finish = event.delta.stop_reason
          if (event.usage?.output_tokens !== undefined) outputTokens = count(event.usage.output_tokens)
          break
        case 'message_stop':
          stopped = true
          break
        case 'error':
          throw new ProviderError('upstream', 'reported an error in its stream')
      }
      if (stopped) break
    }
    if (!stopped) throw new ProviderError('malformed', 'ended its stream before message_stop')
    const toolCalls = [...blocks.values()].map((b) => ({ id: b.id, name: b.name, input: toolInput(b.json) }))
    return { output, toolCalls, stopReason: stopReason(finish), inputTokens, outputTokens }
  }
}

/** Anthropic alternates user and assistant turns: tool results become user turns of tool_result blocks. */
function wireMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  return messages.map((m) => {
    if (m.role === 'tool') return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.toolCallId ?? '', content: messageText(m.content) }] }
    if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      const text = messageText(m.content)
      return { role: 'assistant', content: [...(text !== '' ? [{ type: 'text', text }] : []), ...m.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input }))] }
    }
    return { role: m.role === 'assistant' ? 'assistant' : 'user', content: messageText(m.content) }
  })
}

function stopReason(reason: unknown): StopReason {
  switch (reason) {
    case 'end_turn': case 'stop_sequence': case undefined: case null: return 'stop'
    case 'max_tokens': return 'max_tokens'
    case 'tool_use': return 'tool_calls'
    case 'refusal': return 'content_filter'
    default: return 'other'
  }
}
