/**
 * Bot code's language-model calls (docs/llm.md "From bot code"): client.generateText and client.generateTextStream,
 * through the LLM gateway as the v2 cognitive API's routes call it. The input is checked by the routes' own schema
 * (src/http/operations/cognitive.ts); the call is recorded for the bot, the turn's conversation and user (via
 * `bot-code`) and admitted against the bot's and workspace's budgets like any other; it may take what is left of the
 * calling unit's budget (the prelude says how much), never more than the bot's turn limit.
 */
import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { cognitiveResponse, finalStreamChunk, generateInput } from '../domain/llm/cognitive-v2.js'
import type { LlmGateway } from '../domain/llm/llm-gateway.js'
import type { LlmCaller } from '../domain/llm/llm-usage.js'
import { cognitiveRequest } from '../http/operations/cognitive.js'
import type { BotRow } from '../store/store.js'

/** How long after the calling unit's budget its provider request is abandoned (the unit is ended at its budget). */
const ABANDON_AFTER_MS = 500
/** Streams one run may have open at once (started and not read to their end). */
const MAX_OPEN_STREAMS = 8

interface TextStream {
  chunks: Record<string, unknown>[]
  done: boolean
  error: unknown
  /** Wakes the read waiting for the stream's next chunk or end. */
  wake: (() => void) | undefined
}

/** The model calls of one run of bot code (its host answers generateText, generateTextStream and readTextStream here). */
export class RunLlm {
  private readonly streams = new Map<string, TextStream>()

  /** `maxMs`: the bot's turn limit, the most any call may take. */
  constructor(private readonly llm: LlmGateway | undefined, private readonly bot: BotRow, private readonly conversationId: string | null, private readonly maxMs: number) {}

  /** Whether `method` is one of the model calls answered here. */
  static handles(method: string): boolean {
    return method === 'generateText' || method === 'generateTextStream' || method === 'readTextStream'
  }

  /** The host's answer to a model call (RunLlm.handles). */
  call(method: string, a: Record<string, unknown>): Promise<unknown> {
    if (method === 'generateText') return this.generate(a)
    if (method === 'generateTextStream') return this.start(a)
    return this.read(a)
  }

  private gateway(): LlmGateway {
    if (!this.llm) throw errors.invalidPayload('No language model is available to bot code on this instance')
    return this.llm
  }

  private caller(a: Record<string, unknown>): LlmCaller {
    const userId = typeof a.userId === 'string' && a.userId.length <= 200 ? a.userId : undefined
    return { workspaceId: this.bot.workspaceId, botId: this.bot.id, ...(this.conversationId !== null && { conversationId: this.conversationId }), ...(userId && { userId }) }
  }

  /**
   * Aborted once the calling unit's budget (as the prelude gave it) or the bot's turn limit has passed, and a moment
   * more: the sandbox ends the unit at its budget (a timeout, as for any code that overran it), then the provider
   * request it left is abandoned.
   */
  private deadline(a: Record<string, unknown>): AbortSignal {
    const budget = typeof a.budgetMs === 'number' && a.budgetMs > 0 ? a.budgetMs : this.maxMs
    return AbortSignal.timeout(Math.max(1, Math.min(budget, this.maxMs)) + ABANDON_AFTER_MS)
  }

  private async generate(a: Record<string, unknown>): Promise<unknown> {
    const llm = this.gateway()
    const input = generateInput(cognitiveRequest(a.input ?? {}), this.deadline(a))
    return cognitiveResponse(await llm.generate(this.caller(a), input, 'bot-code'))
  }

  /** Starts the model's answer; its chunks are kept until read (readTextStream). */
  private async start(a: Record<string, unknown>): Promise<unknown> {
    const llm = this.gateway()
    const input = generateInput(cognitiveRequest(a.input ?? {}), this.deadline(a))
    if (this.streams.size >= MAX_OPEN_STREAMS) throw errors.invalidPayload(`client.generateTextStream: at most ${MAX_OPEN_STREAMS} streams may be open at once in one run (read each to its end)`)
    const id = uuidv7()
    const stream: TextStream = { chunks: [], done: false, error: undefined, wake: undefined }
    this.streams.set(id, stream)
    const push = (chunk: Record<string, unknown>) => {
      stream.chunks.push(chunk)
      stream.wake?.()
    }
    llm.generate(this.caller(a), input, 'bot-code', (output) => push({ output, created: Date.now() })).then(
      (result) => {
        stream.done = true
        push(finalStreamChunk(result))
      },
      (err: unknown) => {
        stream.error = err
        stream.done = true
        stream.wake?.()
      },
    )
    return { streamId: id }
  }

  /** What the stream has sent since the last read (waiting for something when nothing has come), and whether it is over. */
  private async read(a: Record<string, unknown>): Promise<unknown> {
    const id = typeof a.streamId === 'string' ? a.streamId : ''
    const stream = this.streams.get(id)
    if (!stream) throw errors.notFound('Stream', id)
    while (stream.chunks.length === 0 && !stream.done) await new Promise<void>((resolve) => (stream.wake = resolve))
    stream.wake = undefined
    const chunks = stream.chunks.splice(0)
    // A failure after some chunks: they go out first, the next read throws it.
    const ended = stream.done && stream.error === undefined
    if (chunks.length > 0 && !ended) return { chunks, done: false }
    this.streams.delete(id)
    if (chunks.length === 0 && stream.error !== undefined) throw stream.error
    return { chunks, done: true }
  }
}
