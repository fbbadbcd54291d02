/* The prelude's own types (erased: the bundle holds none of this). Host contract: ../prelude-contract.ts. */

export type Json = Record<string, any>
export type UserFn = (...args: any[]) => any

/** Per-call bookkeeping: one `turn` or `beforeIncoming` call (several may interleave in one sandbox). */
export interface Run {
  budgetMs: number
  /** Absolute end (ms) of the top-level unit of user code being run, 0 between units. */
  deadline: number
  errors: string[]
  visits: number
  /** A workflow took this event (a capture it answered, or a trigger it fired): hooks see `ctx.handledByWorkflow`. */
  handled: boolean
}

export type Trigger = { kind: 'conversationStarted' } | { kind: 'message'; text?: string; regex?: RegExp } | { kind: 'event'; name: string }

export interface CaptureCard {
  type: 'capture'
  variable: string
  prompt?: Json
  retryPrompt?: Json
  validate: 'text' | 'number' | 'email' | 'pattern'
  regex?: RegExp
  maxRetries: number
}

export type Card =
  | { type: 'say'; payload: Json }
  | { type: 'execute'; code: string }
  | { type: 'action'; action: string; input: unknown; output?: string }
  | CaptureCard
  | { type: 'transition'; conditions: Array<{ when: string; to: string }>; else?: string }
  | { type: 'end' }
  | KnowledgeCard
  | { type: 'handoff'; reason?: string }
  | AgentCard

/** A tool of an agent card: a bot action, with what the model is told of it. */
export interface AgentTool {
  action: string
  description?: string
  /** JSON schema of the action's input. */
  input?: Json
}

/** Answers the user with a language model, its knowledge, the bot's actions as tools and handoff (prelude agent.ts). */
export interface AgentCard {
  type: 'agent'
  instructions: string
  /** Search the bot's knowledge for the user's message: all of its knowledge bases (true) or these (names or ids). */
  knowledge?: true | string[]
  tools: AgentTool[]
  handoff: boolean
  model?: string | string[]
  maxSteps: number
  /** Sent when the model or a tool fails, or maxSteps is reached without an answer. */
  fallback: string
}

/** Answers from knowledge bases (host call searchKnowledge): best passage and its sources, or noAnswer. */
export interface KnowledgeCard {
  type: 'knowledge'
  knowledgeBases?: string[]
  question: string
  limit: number
  output?: string
  noAnswer: string
  /** Relevance threshold of this card's search (default: the server's PARLEY_KB_MIN_SCORE). */
  minScore?: number
}

export interface FlowNode {
  cards: Card[]
  next?: string
}

export interface Flow {
  triggers: Trigger[]
  start: string
  nodes: Map<string, FlowNode>
}

export interface Bot {
  hooks: Map<string, UserFn>
  actions: Map<string, UserFn>
  /** What actions declared as `{ handler, description, input }` say of themselves (agent cards' tools). */
  actionInfo: Map<string, { description?: string; input?: Json }>
  flows: Map<string, Flow>
  /** The module's `guardrails` export, as it is (the host checks it): given with every model call of the bot. */
  guardrails?: Json
}

/** The persisted workflow position (TurnOutput.flow): only ever a capture waiting for the next message. */
export interface Waiting {
  flowId: string
  nodeId: string
  cardIndex: number
  waiting: 'capture'
  retries: number
}

export type Step = { kind: 'next' } | { kind: 'goto'; node: string } | { kind: 'end' } | { kind: 'wait' }

export type Scope = { event: Json; state: Json; vars: Json }
