import { ProviderError, type ChatMessage, type LlmProvider, type ProviderRequest, type ProviderResult, type StopReason, type ToolCall } from '../domain/llm/llm-provider.js'
import { count, messageText, parseJsonLine, postJson, readJson, type ProviderResponse, sseData, toolInput } from './provider-http.js'

/**
 * Any OpenAI-compatible chat completions API (OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio, LiteLLM):
 * `POST {url}/chat/completions`, `Authorization: Bearer <key>` when a key is configured; streamed as SSE with
 * `stream_options.include_usage` for the token counts.
 */
export class OpenAiCompatibleProvider implements LlmProvider {
  readonly ignores = new Set<'json'>()

  constructor(
    readonly name: string,
    private readonly url: string,
    private readonly apiKey: string | undefined,
    private readonly maxAnswerBytes: number,
  ) {}

  async generate(request: ProviderRequest, onDelta?: (text: string) => void): Promise<ProviderResult> {
    const body = {
      model: request.model,
      messages: request.messages.map(wireMessage),
      ...(request.maxTokens !== undefined && { max_tokens: request.maxTokens }),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.stop && { stop: request.stop }),
      ...(request.json && { response_format: { type: 'json_object' } }),
      ...(request.tools && { tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description !== undefined && { description: t.description }), parameters: t.parameters ?? { type: 'object', properties: {} } } })) }),
      ...(request.toolChoice && { tool_choice: request.toolChoice.mode === 'specific' ? { type: 'function', function: { name: request.toolChoice.toolName } } : request.toolChoice.mode }),
      ...(onDelta && { stream: true, stream_options: { include_usage: true } }),
    }
    const headers: Record<string, string> = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}
    const res = await postJson(`${this.url}/chat/completions`, headers, body, request.signal)
    return onDelta ? this.readStream(res, onDelta) : this.readAnswer(res)
  }

  private async readAnswer(res: ProviderResponse): Promise<ProviderResult> {
    const answer = (await readJson(res, this.maxAnswerBytes)) as { choices?: { message?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[]; usage?: Record<string, unknown> }
    const choice = Array.isArray(answer?.choices) ? answer.choices[0] : undefined
    if (!choice || typeof choice.message !== 'object' || choice.message === null) throw new ProviderError('malformed', 'answered without choices[0].message')
    const calls = Array.isArray(choice.message.tool_calls) ? (choice.message.tool_calls as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) : []
    return {
      output: typeof choice.message.content === 'string' ? choice.message.content : '',
      toolCalls: calls.map((c, i) => ({ id: typeof c.id === 'string' ? c.id : `call_${i}`, name: String(c.function?.name ?? ''), input: toolInput(c.function?.arguments) })),
      stopReason: stopReason(choice.finish_reason),
      inputTokens: count(answer.usage?.prompt_tokens),
      outputTokens: count(answer.usage?.completion_tokens),
    }
  }

  private async readStream(res: ProviderResponse, onDelta: (text: string) => void): Promise<ProviderResult> {
    let output = ''
    let finish: unknown
    let usage: Record<string, unknown> | undefined
    let done = false
    const calls: { id: string; name: string; args: string }[] = []
    for await (const data of sseData(res, this.maxAnswerBytes)) {
      if (data === '[DONE]') {
        done = true
        break
      }
      const chunk = parseJsonLine(data) as { choices?: { delta?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[]; usage?: Record<string, unknown> }
      if (chunk.usage && typeof chunk.usage === 'object') usage = chunk.usage
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined
      if (!choice) continue
      if (choice.finish_reason) finish = choice.finish_reason
      const text = choice.delta?.content
      if (typeof text === 'string' && text !== '') {
        output += text
        onDelta(text)
      }
      const deltas = Array.isArray(choice.delta?.tool_calls) ? (choice.delta.tool_calls as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) : []
      for (const d of deltas) {
        const i = typeof d.index === 'number' && d.index >= 0 && d.index < 128 ? d.index : calls.length
        const call = (calls[i] ??= { id: `call_${i}`, name: '', args: '' })
        if (typeof d.id === 'string') call.id = d.id
        if (typeof d.function?.name === 'string') call.name += d.function.name
        if (typeof d.function?.arguments === 'string') call.args += d.function.arguments
      }
    }
    if (!done && finish === undefined) throw new ProviderError('malformed', 'ended its stream before the answer was complete')
    const toolCalls: ToolCall[] = calls.filter(Boolean).map((c) => ({ id: c.id, name: c.name, input: toolInput(c.args) }))
    return { output, toolCalls, stopReason: stopReason(finish), inputTokens: count(usage?.prompt_tokens), outputTokens: count(usage?.completion_tokens) }
  }
}

function wireMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: messageText(m.content) }
  if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
    const text = messageText(m.content)
    return { role: 'assistant', content: text === '' ? null : text, tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) }
  }
  if (Array.isArray(m.content) && m.content.some((p) => p.type === 'image')) {
    return { role: m.role, content: m.content.map((p) => (p.type === 'image' ? { type: 'image_url', image_url: { url: p.url ?? '' } } : { type: 'text', text: p.text ?? '' })) }
  }
  return { role: m.role, content: messageText(m.content) }
}

function stopReason(finish: unknown): StopReason {
  switch (finish) {
    case 'stop': return 'stop'
    case 'length': return 'max_tokens'
    case 'tool_calls': case 'function_call': return 'tool_calls'
    case 'content_filter': return 'content_filter'
    case undefined: case null: return 'stop'
    default: return 'other'
  }
}
