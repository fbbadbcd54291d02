/**
 * Types and helpers for writing Parley bots in TypeScript (or JavaScript with type checking).
 *
 *   import { defineBot } from 'parley/sdk'
 *
 *   export default defineBot({
 *     hooks: {
 *       async afterIncoming({ event, client }) {
 *         if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: `You said: ${event.preview}` } })
 *       },
 *     },
 *   })
 *
 * `parley deploy` bundles the bot (this module included: `defineBot` is the only runtime code, and it returns
 * its argument) into one ES module and deploys it. The contract itself is described in docs/bot-code.md.
 */

// ---- message payloads (the Chat API's 12 types) ----

export interface TextPayload { type: 'text'; text: string }
export interface MarkdownPayload { type: 'markdown'; markdown: string }
export interface ImagePayload { type: 'image'; imageUrl: string }
export interface AudioPayload { type: 'audio'; audioUrl: string }
export interface VideoPayload { type: 'video'; videoUrl: string }
export interface FilePayload { type: 'file'; fileUrl: string; title?: string }
export interface LocationPayload { type: 'location'; latitude: number; longitude: number; address?: string; title?: string }

export interface CardAction {
  /** `postback` and `say` send `value` back as the user's message; `url` opens `value`. */
  action: 'postback' | 'url' | 'say'
  label: string
  value: string
}
export interface CardPayload { type: 'card'; title: string; subtitle?: string; imageUrl?: string; actions: CardAction[] }
/** Carousel items are cards whose `type` may be left out (the spec's items carry none; Parley adds `card` on the way out). */
export interface CarouselPayload { type: 'carousel'; items: (Omit<CardPayload, 'type'> & { type?: 'card' })[] }
export interface ChoiceOption { label: string; value: string }
export interface ChoicePayload { type: 'choice'; text: string; options: ChoiceOption[] }
export interface DropdownPayload { type: 'dropdown'; text: string; options: ChoiceOption[] }
export type BlocItem = TextPayload | MarkdownPayload | ImagePayload | AudioPayload | VideoPayload | FilePayload | LocationPayload
export interface BlocPayload { type: 'bloc'; items: BlocItem[] }

export type MessagePayload =
  | BlocItem
  | CardPayload
  | CarouselPayload
  | ChoicePayload
  | DropdownPayload
  | BlocPayload

// ---- Chat API objects the client returns ----

export interface Message {
  id: string
  createdAt: string
  conversationId: string
  userId: string
  payload: MessagePayload
  metadata?: Record<string, unknown>
}

export interface ChatEvent {
  id: string
  createdAt: string
  conversationId: string
  userId: string
  payload: Record<string, unknown>
}

export interface Conversation { id: string; createdAt: string; updatedAt: string }

export interface User { id: string; name?: string; pictureUrl?: string; profile?: string; createdAt: string; updatedAt: string }

// ---- state, event, client ----

/** JSON data: what state may hold. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined }

export interface BotState {
  /** Saved per user. */
  user: Record<string, any>
  /** Saved per conversation. */
  conversation: Record<string, any>
  /** Saved for the bot (all conversations). */
  bot: Record<string, any>
  /** The running workflow's variables (`vars` in cards); reset when a workflow starts. */
  workflow?: Record<string, any>
}

export interface Trigger {
  flowId: string
  nodeId: string
  eventName: string
  conversationId: string
  userId: string | undefined
  integration: string
}

interface EventBase {
  botId: string
  conversationId: string
  /** ISO 8601. */
  createdOn: string
  id: string
  /** The integration's name, e.g. `chat`. */
  integration: string
  /** Plain text of the payload (a text message's text; a sensible text for every other type). */
  preview: string
  state: BotState
  tags: { conversation: Record<string, string>; message: Record<string, string>; user: Record<string, string> }
  /** Set when a workflow trigger fired during this turn. */
  trigger?: Trigger
  /** Knowledge-base results, when knowledge bases were queried for the event. */
  kb?: unknown
}

/** A user's message to the bot (`type` is the payload's type) or, from outgoing hooks, the bot's message. */
export type MessageEvent = EventBase & {
  [P in MessagePayload as P['type']]: { type: P['type']; payload: P; direction: 'incoming' | 'outgoing'; messageId?: string; userId?: string }
}[MessagePayload['type']]

/** A custom event sent through the Chat API (`createEvent`). */
export type CustomEvent = EventBase & { type: 'custom'; payload: Record<string, any>; direction: 'incoming'; messageId?: undefined; userId?: string }

/**
 * A human handoff of the conversation started or ended (README "Human handoff"): payload { type, handoffId, reason?, agent?: { name } }.
 * While a handoff is open, the user's messages run no hooks or workflows; these two events do.
 */
export type HandoffEvent = EventBase & { type: 'handoff_started' | 'handoff_ended'; payload: { type: 'handoff_started' | 'handoff_ended'; handoffId: string; reason?: string; agent?: { name: string } }; direction: 'incoming'; messageId?: undefined; userId?: string }

/** A handoff as bot code sees it (client.startHandoff / endHandoff): the Admin API's Handoff. */
export interface Handoff {
  id: string; botId: string; conversationId: string; userId: string; status: 'waiting' | 'active' | 'ended'; reason?: string
  requestedAt: string; claimedBy?: { memberId: string; name: string; avatarUrl?: string }; claimedAt?: string; endedAt?: string
  notes: { memberId: string; text: string; createdAt: string }[]
}

export type BotEvent = MessageEvent | CustomEvent | HandoffEvent

/** Acts for the bot, limited to the bot's own data. `conversationId` defaults to the event's. */
export interface BotClient {
  createMessage(args: { conversationId?: string; payload: MessagePayload; metadata?: Record<string, Json> }): Promise<{ message: Message | null }>
  createEvent(args: { conversationId?: string; payload: Record<string, Json> }): Promise<{ event: ChatEvent }>
  /** Shows the webchat's typing indicator for `timeout` ms (default 12 000, at most 60 000); a turn shows one on its own. */
  startTypingIndicator(args?: { conversationId?: string; timeout?: number }): Promise<Record<string, never>>
  stopTypingIndicator(args?: { conversationId?: string }): Promise<Record<string, never>>
  getMessage(args: { id: string }): Promise<{ message: Message }>
  listMessages(args?: { conversationId?: string; nextToken?: string }): Promise<{ messages: Message[]; meta: { nextToken?: string } }>
  getConversation(args: { id: string }): Promise<{ conversation: Conversation }>
  getUser(args: { id: string }): Promise<{ user: User }>
  /** Hands the conversation to a workspace member (the console's inbox); returns the open handoff if there is one. */
  startHandoff(args?: { conversationId?: string; reason?: string }): Promise<{ handoff: Handoff }>
  /** Returns the conversation to the bot. */
  endHandoff(args?: { conversationId?: string }): Promise<{ handoff: Handoff }>
}

// ---- hooks and actions ----

/** An action: `(ctx, input) => output`. */
export type Action<I = any, O = any> = (ctx: BotContext<any>, input: I) => O | Promise<O>
export type Actions = Record<string, Action>

/** The actions as `ctx.actions` exposes them: called with the input only. */
export type BoundActions<A extends Actions> = { readonly [K in keyof A]: (input: Parameters<A[K]>[1]) => Promise<Awaited<ReturnType<A[K]>>> }

export interface BotContext<A extends Actions = Actions> {
  event: BotEvent
  client: BotClient
  actions: BoundActions<A>
  /** The same object as `event.state`. */
  state: BotState
  /** True when a workflow took this event (it answered a capture or fired a trigger). */
  handledByWorkflow?: boolean
}

/** `beforeIncoming` and `beforeOutgoing` may return `{ stop: true }` to drop the event. */
export type HookResult = void | undefined | { stop: boolean }

export type Hook<A extends Actions = Actions> = (ctx: BotContext<A>) => HookResult | Promise<HookResult>

export interface Hooks<A extends Actions = Actions> {
  beforeIncoming?: Hook<A>
  afterIncoming?: Hook<A>
  beforeOutgoing?: Hook<A>
  afterOutgoing?: Hook<A>
  afterTurnEnd?: Hook<A>
}

// ---- workflows ----

export type WorkflowTrigger =
  | { type: 'conversationStarted' }
  | { type: 'message'; text?: string; pattern?: string; flags?: string }
  | { type: 'event'; name: string }

/** A payload whose string fields may be `{{ expr }}` templates. */
export type TemplatedPayload = MessagePayload

export type Card<A extends Actions = Actions> =
  | { type: 'say'; text: string }
  | { type: 'say'; payload: TemplatedPayload }
  | { type: 'execute'; code: string }
  | { type: 'action'; action: keyof A & string; input?: Json; output?: string }
  | {
      type: 'capture'
      variable: string
      prompt?: string | TemplatedPayload
      validate?: { type: 'text' | 'number' | 'email' } | { type: 'pattern'; pattern: string; flags?: string }
      retryPrompt?: string | TemplatedPayload
      maxRetries?: number
    }
  | { type: 'transition'; conditions?: Array<{ when: string; to: string }>; else?: string }
  | { type: 'end' }
  /** Hands the conversation to a person (client.startHandoff) and ends the flow. `reason` may use templates. */
  | { type: 'handoff'; reason?: string }

export interface WorkflowNode<A extends Actions = Actions> {
  cards: Array<Card<A>>
  next?: string
}

export interface Workflow<A extends Actions = Actions> {
  trigger: WorkflowTrigger | WorkflowTrigger[]
  /** The first node; defaults to the first key of `nodes`. */
  start?: string
  nodes: Record<string, WorkflowNode<A>>
}

export type Workflows<A extends Actions = Actions> = Record<string, Workflow<A>>

export interface BotDefinition<A extends Actions = Actions> {
  hooks?: Hooks<A>
  actions?: A
  workflows?: Workflows<A>
}

/**
 * Declares a bot with full types for `ctx`, `event`, `client`, the actions and the workflow cards.
 * Export the result as the module's default export. It returns its argument unchanged.
 */
export function defineBot<A extends Actions>(bot: BotDefinition<A>): BotDefinition<A> {
  return bot
}

/** Types one action with its input and output (for actions declared outside `defineBot`). */
export function defineAction<I, O>(action: (ctx: BotContext, input: I) => O | Promise<O>): Action<I, O> {
  return action
}

/** Types one workflow (for workflows declared outside `defineBot`). */
export function defineWorkflow<A extends Actions = Actions>(workflow: Workflow<A>): Workflow<A> {
  return workflow
}
