/**
 * One step of an agent card (issue #29 item 2; docs/bot-code.md "agent"): the model is given the bot's guardrails, the
 * card's instructions, the knowledge passages found for the user's message (numbered, to be cited), the conversation's
 * recent messages (as many as fit the model's context) and the card's own steps so far (its tool calls and their
 * results), with the card's tools; it answers with text (streamed to the conversation's listeners) or with tool calls,
 * which the card runs in the sandbox before the next step. The loop, its bound (maxSteps) and the tools' code are the
 * prelude's (src/runtime/prelude/agent.ts); this is the model's side of each step.
 */
import type { PubSub } from '../../pubsub/pubsub.js'
import type { Store } from '../../store/store.js'
import { StreamPieces, type AnswerStream } from '../answer-stream.js'
import { citationOf, citedPassages, numberedPassages, readPassages, type AnswerPassage, type Citation } from '../knowledge/knowledge-answer.js'
import type { GenerateInput, LlmGateway } from '../llm/llm-gateway.js'
import type { ChatMessage, ToolCall, ToolSpec } from '../llm/llm-provider.js'
import type { LlmCaller } from '../llm/llm-usage.js'
import { cutAnswer, guardrailPrompt, readGuardrails, tokensFor, type Guardrails } from './guardrails.js'

/** The tool the model hands the conversation to a person with, when the card allows it. */
export const HANDOFF_TOOL = 'handoff_to_human'
/** What a tool's name may be (the strictest of the providers' rules: OpenAI's). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

export interface AgentStepInput {
  instructions: string
  guardrails: Guardrails
  /** The knowledge passages found for the user's message (best first), numbered in the prompt; none without knowledge. */
  passages: AnswerPassage[]
  tools: ToolSpec[]
  handoff: boolean
  /** The card's model (id, preset or fallback list); the server's default when absent. */
  model?: string | string[]
  /** The card's own steps so far: the model's tool calls (assistant) and their results (tool). */
  steps: ChatMessage[]
}

export type AgentStepOutput =
  | { kind: 'answer'; text: string; citations: Citation[]; streamId?: string }
  | { kind: 'tools'; toolCalls: ToolCall[] }
  | { kind: 'failed'; error: string }

export interface AgentStepOptions {
  /** The model when the card names none (PARLEY_KB_ANSWER_MODEL's, else `best`). */
  model: string
}

const MEMORY_MESSAGES = 30
const MEMORY_CHARS_MAX = 48_000
const MESSAGE_CHARS = 4_000
const ANSWER_TOKENS = 1_000
const ANSWER_CHARS = 8_000

export class AgentSteps {
  constructor(
    private readonly llm: LlmGateway,
    private readonly pubsub: PubSub,
    private readonly store: Store,
    private readonly options: AgentStepOptions,
  ) {}

  /** One step, within `timeoutMs` (what is left of the run's time). */
  async step(caller: LlmCaller & { conversationId: string }, input: AgentStepInput, stream: AnswerStream, timeoutMs: number): Promise<AgentStepOutput> {
    const model = input.model ?? this.options.model
    const passages = input.passages.slice(0, 10)
    const system = [...guardrailPrompt(input.guardrails), input.instructions.trim()]
    if (passages.length > 0) {
      system.push(`Use the numbered passages below when they help, citing them by their numbers in square brackets, like [1]. Do not make up facts they do not hold.\n\n${numberedPassages(passages)}`)
    }
    if (input.handoff) system.push(`When the user asks for a person, or you cannot help, call ${HANDOFF_TOOL} with the reason.`)
    const tools: ToolSpec[] = [...input.tools]
    if (input.handoff) tools.push({ name: HANDOFF_TOOL, description: 'Hand the conversation to a human agent', parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why a person is needed' } } } })
    const memory = await this.memory(stream.integrationId, caller.conversationId, this.memoryChars(model))
    const request: GenerateInput = {
      model,
      messages: [{ role: 'system', content: system.filter((s) => s !== '').join('\n\n') }, ...memory, ...input.steps],
      ignored: [],
      temperature: 0,
      maxTokens: tokensFor(input.guardrails.maxAnswerChars, ANSWER_TOKENS),
      ...(tools.length > 0 && { tools }),
      meta: { promptSource: 'agent-card' },
      signal: AbortSignal.timeout(timeoutMs),
    }
    const pieces = new StreamPieces(this.pubsub, stream, Date.now)
    let result
    try {
      result = await this.llm.generate(caller, request, 'agent', (text) => pieces.add(text))
    } catch (err) {
      await pieces.abort()
      return { kind: 'failed', error: (err as Error).message }
    }
    if (result.toolCalls.length > 0) {
      // What the model wrote beside its tool calls is not the answer: the listeners drop it.
      await pieces.abort()
      return { kind: 'tools', toolCalls: result.toolCalls }
    }
    await pieces.flush()
    const all = passages.map(citationOf)
    const { text, cited } = citedPassages(result.output.trim(), passages.length)
    if (text === '') {
      await pieces.abort()
      return { kind: 'failed', error: 'the model answered nothing' }
    }
    return {
      kind: 'answer',
      text: cutAnswer(text.slice(0, ANSWER_CHARS), input.guardrails.maxAnswerChars),
      citations: cited.map((i) => all[i]!),
      ...(pieces.started && { streamId: stream.streamId }),
    }
  }

  /** How much of the conversation fits: half the smallest context of the models the step may use, 4 characters a token. */
  private memoryChars(model: string | string[]): number {
    const tokens = this.llm.contextTokens(model)
    return Math.min(MEMORY_CHARS_MAX, Math.max(1_000, Math.floor(tokens / 2) * 4))
  }

  /** The conversation's recent messages, oldest first, as the model's user and assistant turns, newest kept first. */
  private async memory(integrationId: string, conversationId: string, budget: number): Promise<ChatMessage[]> {
    const { items } = await this.store.listMessages(integrationId, conversationId, { limit: MEMORY_MESSAGES })
    const out: ChatMessage[] = []
    let used = 0
    for (const m of items) {
      const text = messageText(m.payload).slice(0, MESSAGE_CHARS)
      if (used + text.length > budget) break
      used += text.length
      out.unshift({ role: m.isBot ? 'assistant' : 'user', content: text })
    }
    // It starts with the user's turn (a greeting the bot sent first is left out): Anthropic's API requires it.
    while (out[0]?.role === 'assistant') out.shift()
    return out
  }
}

/** A message as the model reads it: its text, else `[type]` and whatever text the payload has (a title, markdown). */
function messageText(payload: Record<string, unknown>): string {
  if (payload.type === 'text' && typeof payload.text === 'string') return payload.text
  const words = [payload.markdown, payload.title, payload.text].filter((v): v is string => typeof v === 'string' && v !== '')
  return `[${String(payload.type)}]${words.length > 0 ? ` ${words.join(' ')}` : ''}`
}

const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined)
const obj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A step's input as the sandbox sent it (the prelude builds it from the card, the bot's actions and guardrails, and
 * the card's steps, which hold what the bot's tools returned): only the known fields, checked and bounded.
 */
export function agentStepInput(a: Record<string, unknown>): AgentStepInput {
  const list = (v: unknown, max: number): unknown[] => (Array.isArray(v) ? v.slice(0, max) : [])
  const tools: ToolSpec[] = list(a.tools, 64).filter(obj).filter((t) => typeof t.name === 'string' && TOOL_NAME.test(t.name) && t.name !== HANDOFF_TOOL).map((t) => ({
    name: t.name as string,
    ...(typeof t.description === 'string' && { description: t.description.slice(0, 1000) }),
    ...(obj(t.parameters) && { parameters: t.parameters }),
  }))
  const steps: ChatMessage[] = []
  for (const s of list(a.steps, 200)) {
    if (!obj(s)) continue
    if (s.role === 'assistant' && Array.isArray(s.toolCalls)) {
      const toolCalls = s.toolCalls.filter(obj).filter((c) => typeof c.id === 'string' && typeof c.name === 'string')
        .map((c) => ({ id: c.id as string, name: c.name as string, input: obj(c.input) ? c.input : {} }))
      steps.push({ role: 'assistant', content: null, toolCalls })
    } else if (s.role === 'tool' && typeof s.toolCallId === 'string') {
      steps.push({ role: 'tool', toolCallId: s.toolCallId, content: str(s.content, 20_001) ?? '' })
    }
  }
  const model = typeof a.model === 'string' ? a.model : Array.isArray(a.model) && a.model.every((m) => typeof m === 'string') ? (a.model as string[]).slice(0, 5) : undefined
  return {
    instructions: str(a.instructions, 8000) ?? '',
    guardrails: readGuardrails(a.guardrails),
    passages: readPassages(a.passages), tools, handoff: a.handoff === true, steps,
    ...(model !== undefined && { model }),
  }
}
