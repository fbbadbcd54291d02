/**
 * Knowledge answers (issue #29 item 1; docs/bot-code.md "knowledge"): a knowledge card's reply composed by the
 * configured language model from the best passages, with the passages it used as citations, streamed to the
 * conversation's listeners as it is produced. The model is asked only when some passage reached the relevance
 * threshold (the card's no-answer path needs no model), and says NO_ANSWER when the passages do not hold the answer.
 * Any failure (no provider, a spent budget, the provider failing or too slow) leaves the card to answer with the best
 * passage as it is: never silence.
 */
import type { LlmCaller } from '../llm/llm-usage.js'
import type { GenerateInput, LlmGateway } from '../llm/llm-gateway.js'
import type { PubSub } from '../../pubsub/pubsub.js'
import { cutAnswer, guardrailPrompt, tokensFor, type Guardrails } from '../agent/guardrails.js'
import { StreamPieces, type AnswerStream } from '../answer-stream.js'
export type { AnswerStream } from '../answer-stream.js'

/** A passage as knowledge search gives it to bot code (src/runtime/knowledge.ts KbResult), as far as an answer needs. */
export interface AnswerPassage {
  content: string
  title?: string
  fileId: string
  fileKey: string
  passageId?: string
  pageNumber?: number
}

/** One source of an answer, in `metadata.citations` of the bot's message. */
export interface Citation {
  fileId: string
  key: string
  title?: string
  passageId?: string
  pageNumber?: number
  /** The start of the passage, for a tooltip or a footnote. */
  quote: string
}

export interface KnowledgeAnswer {
  /** The model's answer, its [n] markers taken out; null when it had none (the card answers with the best passage). */
  text: string | null
  /** The passages the answer cites (all the passages given when it cites none), or those given when there is no answer. */
  citations: Citation[]
  /** The id of the stream its pieces went out under, when some did: the final message carries it as `metadata.streamId`. */
  streamId?: string
  /** The model said the passages do not hold the answer: the card takes its no-answer path. */
  noAnswer?: true
}

export interface KnowledgeAnswerOptions {
  /** The model id (or preset, or fallback list) answers use (PARLEY_KB_ANSWER_MODEL). */
  model: string
  /** The longest an answer may take, in ms (PARLEY_KB_ANSWER_TIMEOUT_MS); the provider's own timeout applies too. */
  timeoutMs: number
  warn: (fields: Record<string, unknown>, message: string) => void
  clock?: () => number
}

const MAX_PASSAGES = 10
const PASSAGE_CHARS = 2000
const QUESTION_CHARS = 2000
const QUOTE_CHARS = 200
const MAX_ANSWER_CHARS = 4000
const MAX_ANSWER_TOKENS = 800
const NO_ANSWER = 'NO_ANSWER'

export const KNOWLEDGE_ANSWER_INSTRUCTIONS = [
  'You answer the user\'s question using only the numbered passages below.',
  'Answer in the language the question is written in, briefly.',
  'After each statement, cite the passages it comes from by their numbers in square brackets, like [1] or [2][3].',
  `If the passages do not contain the answer, reply with exactly ${NO_ANSWER} and nothing else.`,
].join(' ')

const clip = (s: unknown, n: number) => String(s).slice(0, n)

export function citationOf(p: AnswerPassage): Citation {
  return {
    fileId: p.fileId, key: p.fileKey,
    ...(p.title && { title: p.title }),
    ...(p.passageId && { passageId: p.passageId }),
    ...(typeof p.pageNumber === 'number' && { pageNumber: p.pageNumber }),
    quote: clip(p.content, QUOTE_CHARS),
  }
}

/** The passages as a prompt numbers them (`[n] (file, page) text`), for the model to cite as [n]. */
export function numberedPassages(passages: AnswerPassage[]): string {
  const sources = passages.map((p, i) => `[${i + 1}] (${clip(p.fileKey, 200)}${typeof p.pageNumber === 'number' ? `, page ${p.pageNumber}` : ''}) ${clip(p.content, PASSAGE_CHARS)}`)
  return `Passages:\n${sources.join('\n\n')}`
}

/** The prompt's user message: the numbered passages, then the question. */
export function passagesPrompt(question: string, passages: AnswerPassage[]): string {
  return `${numberedPassages(passages)}\n\nQuestion: ${clip(question, QUESTION_CHARS)}`
}

/** Passages as they come back from the sandbox (bot code may have changed them): those with the fields an answer reads, at most 10. */
export function readPassages(v: unknown): AnswerPassage[] {
  if (!Array.isArray(v)) return []
  return v.slice(0, MAX_PASSAGES).filter((p): p is AnswerPassage => typeof p === 'object' && p !== null &&
    typeof p.content === 'string' && typeof p.fileId === 'string' && typeof p.fileKey === 'string')
}

/** The answer's text without its [n] markers (and the space before each), and the passages they name (in order of first mention). */
export function citedPassages(answer: string, count: number): { text: string; cited: number[] } {
  const cited: number[] = []
  const text = answer.replace(/ ?\[(\d{1,2})\]/g, (marker, n: string) => {
    const i = Number(n) - 1
    if (i < 0 || i >= count) return marker
    if (!cited.includes(i)) cited.push(i)
    return ''
  }).trim()
  return { text, cited }
}

export class KnowledgeAnswers {
  private readonly clock: () => number

  constructor(
    private readonly llm: LlmGateway,
    private readonly pubsub: PubSub,
    private readonly options: KnowledgeAnswerOptions,
  ) {
    this.clock = options.clock ?? Date.now
  }

  /** The answer to `question` from `passages` (best first); `stream` sends its pieces to the conversation as they come. */
  async answer(caller: LlmCaller, question: string, given: AnswerPassage[], stream?: AnswerStream, guardrails: Guardrails = {}): Promise<KnowledgeAnswer> {
    const passages = given.slice(0, MAX_PASSAGES)
    const all = passages.map(citationOf)
    if (passages.length === 0) return { text: null, citations: [] }
    const input: GenerateInput = {
      model: this.options.model,
      messages: [
        { role: 'system', content: [...guardrailPrompt(guardrails), KNOWLEDGE_ANSWER_INSTRUCTIONS].join('\n\n') },
        { role: 'user', content: passagesPrompt(question, passages) },
      ],
      ignored: [],
      temperature: 0,
      maxTokens: tokensFor(guardrails.maxAnswerChars, MAX_ANSWER_TOKENS),
      meta: { promptSource: 'knowledge-answer' },
      signal: AbortSignal.timeout(this.options.timeoutMs),
    }
    const pieces = stream ? new StreamPieces(this.pubsub, stream, this.clock) : undefined
    // The first pieces are held until they cannot be the start of NO_ANSWER: listeners never see that word.
    let held = ''
    let streaming: boolean | undefined
    const onDelta = pieces && ((text: string) => {
      if (streaming !== undefined) {
        if (streaming) pieces.add(text)
        return
      }
      held += text
      const start = held.trimStart()
      if (start.length < NO_ANSWER.length && NO_ANSWER.startsWith(start)) return
      streaming = !start.startsWith(NO_ANSWER)
      if (streaming) pieces.add(held)
    })
    let output: string
    try {
      output = (await this.llm.generate(caller, input, 'knowledge', onDelta)).output
      await pieces?.flush()
    } catch (err) {
      await pieces?.abort()
      this.options.warn({ err: (err as Error).message, botId: caller.botId, conversationId: caller.conversationId }, 'A knowledge answer could not be composed: the card answers with the best passage')
      return { text: null, citations: all }
    }
    const answer = output.trim()
    if (answer.startsWith(NO_ANSWER)) {
      await pieces?.abort()
      return { text: null, citations: [], noAnswer: true }
    }
    if (answer === '') return { text: null, citations: all }
    const { text, cited } = citedPassages(answer, passages.length)
    return {
      text: cutAnswer(clip(text, MAX_ANSWER_CHARS), guardrails.maxAnswerChars),
      citations: cited.length > 0 ? cited.map((i) => all[i]!) : all,
      ...(pieces?.started && { streamId: stream!.streamId }),
    }
  }
}
