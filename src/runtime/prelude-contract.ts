/**
 * The contract between the host (worker + QuickJS) and the in-sandbox runtime ("prelude").
 *
 * The prelude (the modules of src/runtime/prelude/, bundled into `parleyPrelude` by src/runtime/prelude.ts) is
 * trusted code that runs INSIDE the sandbox, next to the bot's untrusted code. It is injected as the bundle's text,
 * so its modules import only each other (and types): nothing outside them but the function's parameters and standard
 * JavaScript built-ins available in QuickJS (ES2020+: async/await, Promise, RegExp, JSON, Map, Set, optional
 * chaining...). No Node APIs, no timers (setTimeout does not exist). All data crossing the boundary is JSON text.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Provided by the host to the prelude. */
export interface PreludeHost {
  /**
   * Calls the platform on the bot's behalf. `argsJson` is a JSON object; resolves with the JSON text of
   * the result, or rejects with an Error whose message explains the failure (e.g. "ResourceNotFound: Message x not found").
   * Methods: createMessage {conversationId, payload, metadata?} → {message}; createEvent {conversationId, payload} → {event};
   * getMessage {id} → {message}; listMessages {conversationId, nextToken?} → {messages, meta}; getConversation {id} →
   * {conversation}; getUser {id} → {user}; searchKnowledge {query, knowledgeBases?, limit?} → {included, results};
   * startTypingIndicator {conversationId, timeout?} / stopTypingIndicator {conversationId} → {};
   * startHandoff {conversationId, reason?, userId?} / endHandoff {conversationId} → {handoff}.
   * All are limited to the bot's own data.
   * createMessage here is the RAW persistence call: the prelude itself runs beforeOutgoing/afterOutgoing around it.
   */
  call(method: string, argsJson: string): Promise<string>
  /**
   * Sets the wall-time budget, in milliseconds, of the user code about to run (one hook, action or card); the host
   * stops the sandbox when the budget is exceeded. The host starts each run with the run's budget (`budgetMs`), so the
   * prelude calls this only when a piece of user code needs a deadline other than the one the host holds (by more
   * than 1% of the budget), and after the host ended a unit (abortUnit).
   */
  budget(ms: number): void
  log(level: LogLevel, text: string): void
  /**
   * Whether the run was refused memory (its heap could not grow): what QuickJS throws then may be `null` (it had no
   * memory left to make an error), which the prelude then words as the memory limit.
   */
  outOfMemory?(): boolean
}

/** Helpers the host passes in (also stringified). */
export interface PreludeHelpers {
  /** Plain-text form of a message payload (see src/runtime/preview.ts). */
  previewOf(payload: unknown): string
  /**
   * The client methods passed to the host as they are: the operation table's (src/http/operations
   * PASSED_THROUGH_METHODS), given by the worker, so an operation added there reaches bot code with no other edit.
   */
  methods: readonly string[]
}

/** Where a conversation stands in a workflow, persisted between turns by the host (opaque to it). */
export type FlowState = Record<string, unknown> | null

export interface TurnInput {
  /** The spec's event object for this incoming event (direction 'incoming'), including `state`. */
  event: Record<string, unknown> & {
    state: { user: Record<string, unknown>; conversation: Record<string, unknown>; bot: Record<string, unknown>; workflow?: Record<string, unknown> }
  }
  flow: FlowState
  /**
   * True for the conversation's start (its own turn when a user creates the conversation, before
   * anything they send; event.type 'conversationStarted'): only conversationStarted triggers run, no
   * incoming hook. Always false for messages and events.
   */
  conversationStarted: boolean
  /** Wall-time budget of each hook, action or card run, in ms. */
  budgetMs: number
}

export interface TurnOutput {
  /** The state after the turn: saved by the host and given back on the next turn. */
  state: { user: Record<string, unknown>; conversation: Record<string, unknown>; bot: Record<string, unknown>; workflow?: Record<string, unknown> }
  flow: FlowState
  /** Errors raised by user code during the turn (the turn continues where it sensibly can). */
  errors: string[]
}

export interface BeforeIncomingInput {
  event: TurnInput['event']
  budgetMs: number
}

export interface BeforeIncomingOutput {
  /** The (possibly changed) payload to store and deliver. */
  payload: Record<string, unknown>
  stop: boolean
  /** Errors raised by the hook (already logged), when there were any. */
  errors?: string[]
}

/** How the prelude (prelude/run.ts) words a unit of user code stopped at its time budget (the host counts it as a timeout). */
export const BUDGET_EXCEEDED = /timed out: it ran longer than its \d+ ms budget/

export interface BotSummary {
  hooks: string[]
  actions: string[]
  workflows: string[]
}

/** What `parleyPrelude(host, helpers)` returns (frozen). */
export interface PreludeApi {
  /** Validates and keeps the bot module's exports (named or default). Throws an Error with a clear message if invalid. */
  load(exports: unknown): string // JSON BotSummary
  beforeIncoming(inputJson: string): Promise<string> // BeforeIncomingInput → BeforeIncomingOutput
  turn(inputJson: string): Promise<string> // TurnInput → TurnOutput
  /**
   * Called by the host when the top-level unit of user code running now (a hook, a card…) has overrun its
   * budget: that unit fails with a timeout (recorded like its errors) and the turn goes on with its next
   * hook or card. False when no unit is running.
   */
  abortUnit(): boolean
}
