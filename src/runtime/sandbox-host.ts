import { createHash } from 'node:crypto'
import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { publishStreamSignal, publishTyping } from '../domain/conversation-stream.js'
import { CHAT_PAGE_SIZE } from '../domain/chat-service.js'
import { eventView } from '../domain/chat-views.js'
import type { BotChatService } from '../domain/bot-chat-service.js'
import type { HandoffService } from '../domain/handoff-service.js'
import type { LlmGateway } from '../domain/llm/llm-gateway.js'
import { runtimeConversationView } from '../domain/runtime-views.js'
import type { TablesService } from '../domain/tables-service.js'
import type { SemanticRanking } from '../domain/knowledge/embeddings/fusion.js'
import type { PubSub } from '../pubsub/pubsub.js'
import type { BotLogRow, BotRow, IntegrationRow, JsonObject, Store } from '../store/store.js'
import { optionalTags, sandboxMessageView, sandboxRuntimeCall, sandboxUserView } from './sandbox-client.js'
import { sandboxTableCall } from './sandbox-tables.js'
import { RunLlm } from './sandbox-llm.js'
import { searchForBotScored } from './knowledge.js'
import { citationOf, readPassages, type KnowledgeAnswers } from '../domain/knowledge/knowledge-answer.js'
import { agentStepInput, type AgentSteps } from '../domain/agent/agent-steps.js'
import { readGuardrails } from '../domain/agent/guardrails.js'
import type { LogLevel } from './prelude-contract.js'
import type { SandboxHost } from './sandbox.js'
import type { SandboxUnits } from './sandbox-units.js'

/** A running turn's typing indicator expires this long after the last renewal. */
export const TYPING_TTL_MS = 12_000
/** The longest typing indicator bot code may start (client.startTypingIndicator's timeout). */
const MAX_TYPING_TIMEOUT_MS = 60_000

export type PayloadValidator = (payload: unknown) => string | undefined
/** callAction of `alias:action` on an installed integration (action_triggered); undefined when `type` names none. */
export type IntegrationActions = (bot: BotRow, type: string, input: JsonObject) => Promise<Record<string, unknown> | undefined>

/** The host of one run: the bot client's calls, the run's logs and what it appended to its own conversation. */
export type RunHost = SandboxHost & { flush(): Promise<void>; takeLogs(): BotLogRow[]; ownSeqs: number[] }

/** What the bot client acts on besides the store (compose.ts). */
export interface BotClientOptions {
  /** Validates payloads sent by bot code with the same rules as the Chat API. */
  validatePayload: PayloadValidator
  /** Human handoff: client.startHandoff / endHandoff. */
  handoffs?: HandoffService | undefined
  /** The Tables API service behind the client's table operations. */
  tables?: TablesService | undefined
  /** Composes knowledge-card answers with the LLM gateway (docs/bot-code.md "knowledge"); the best passage is used when absent. */
  knowledgeAnswers?: KnowledgeAnswers | undefined
  /** The model's side of agent cards' steps (docs/bot-code.md "agent"); absent when no provider is configured. */
  agentSteps?: AgentSteps | undefined
  /** The vector ranking knowledge searches fuse with the lexical one (an embeddings service); lexical only when absent. */
  semanticRanking?: SemanticRanking | undefined
  /** Relevance threshold of bot knowledge searches (PARLEY_KB_MIN_SCORE; 0: off). */
  kbMinScore?: number | undefined
  /** The LLM gateway behind client.generateText and generateTextStream (docs/llm.md). */
  llm?: LlmGateway | undefined
  clock?: (() => number) | undefined
}

/**
 * The Chat API's domain behind the client, and the installed integrations' actions. Built by BotRuntime's
 * `domain` option around the runtime's beforeIncoming hook, whose runs have this client (docs/architecture.md).
 */
export interface BotClientDomain {
  botChat: BotChatService
  integrationActions: IntegrationActions
}

/** Deterministic ids for a turn's replies: a turn re-run after a crash cannot reply twice. */
function replyId(sourceId: string, index: number): string {
  const hex = createHash('sha256').update(`${sourceId}:${index}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The sandboxed bot's client: one host per run of its code (SandboxUnits.run). */
export class BotClientHosts {
  private readonly clock: () => number

  constructor(
    private readonly store: Store,
    private readonly pubsub: PubSub,
    private readonly units: SandboxUnits,
    private readonly domain: BotClientDomain,
    private readonly options: BotClientOptions,
  ) {
    this.clock = options.clock ?? Date.now
  }

  /** callAction of `alias:action` on an installed integration; undefined when `type` names none. */
  integrationAction(bot: BotRow, type: string, input: JsonObject): Promise<Record<string, unknown> | undefined> {
    return this.domain.integrationActions(bot, type, input)
  }

  /** The host of one run of `bot`'s code for `integration` (and `conversationId`, when it has one); `sourceId` seeds its reply ids. */
  create(bot: BotRow, integration: IntegrationRow, conversationId: string | null, sourceId: string): RunHost {
    const logs: BotLogRow[] = []
    /** Sequence numbers of what the bot appended to the run's own conversation. */
    const ownSeqs: number[] = []
    let replies = 0
    let events = 0
    let searches = 0
    let composed = 0
    let agentSteps = 0
    const runStarted = this.clock()
    const domain = this.domain.botChat
    const { tables, handoffs } = this.options
    const ownConversation = async (id: unknown) => {
      if (typeof id !== 'string') throw errors.invalidPayload('conversationId must be a string')
      const conversation = await this.store.getConversation(integration.id, id)
      if (!conversation) throw errors.notFound('Conversation', id)
      return conversation
    }
    /** Writing needs only the id: the run's own conversation is known to be the integration's (appends fail if it was deleted). */
    const ownConversationId = async (id: unknown): Promise<{ id: string }> =>
      conversationId !== null && id === conversationId ? { id: conversationId } : ownConversation(id)
    /**
     * Where createMessage writes: the run's integration's conversation, or one of the bot's other integrations'
     * (a conversation the bot started on an installed integration's channel: its message goes out there).
     */
    const writableConversation = async (id: unknown): Promise<{ conversation: { id: string }; into: IntegrationRow }> => {
      if (conversationId !== null && id === conversationId) return { conversation: { id: conversationId }, into: integration }
      if (typeof id !== 'string') throw errors.invalidPayload('conversationId must be a string')
      if (await this.store.getConversation(integration.id, id)) return { conversation: { id }, into: integration }
      const found = await domain.getConversation(bot, id)
      const into = (await this.store.listIntegrations(bot.id)).find((i) => i.id === found.integrationId)
      if (!into) throw errors.notFound('Conversation', id)
      return { conversation: { id }, into }
    }
    let models: RunLlm | undefined
    /** Whom a card's model call is for: the bot, the run's conversation and, as the prelude says, its user. */
    const modelCaller = (conversation: string, userId: unknown) => ({ workspaceId: bot.workspaceId, botId: bot.id, conversationId: conversation, ...(typeof userId === 'string' && { userId }) })
    const call = async (method: string, args: unknown): Promise<unknown> => {
      const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>
      const tableCall = tables && sandboxTableCall(tables, bot, method, a)
      if (tableCall) return tableCall
      const runtimeCall = sandboxRuntimeCall(domain, bot, method, a)
      if (runtimeCall) return runtimeCall
      if (RunLlm.handles(method)) return (models ??= new RunLlm(this.options.llm, bot, conversationId, this.units.limitsOf(bot).timeoutMs)).call(method, a)
      switch (method) {
        case 'createMessage': {
          const { conversation, into } = await writableConversation(a.conversationId)
          const problem = this.options.validatePayload(a.payload)
          if (problem) throw errors.invalidPayload(problem)
          const tags = optionalTags(a.tags)
          // Deterministic: a turn run again (after a crash, or moved off a stopped worker) finds its reply instead of sending it twice.
          const id = replyId(sourceId, replies++)
          const metadata = typeof a.metadata === 'object' && a.metadata !== null ? (a.metadata as JsonObject) : null
          // Idempotent by id inside the append (the conversation log): a reply already there is answered as it is.
          const { row: message, created } = await domain.appendOutgoing(into, conversation.id, id, a.payload as JsonObject, metadata)
          if (created && message.conversationId === conversationId) ownSeqs.push(message.seq)
          if (created && tags) await domain.tagMessage(into, message.id, tags)
          return { message: sandboxMessageView({ ...message, tags: tags ?? {}, updatedAt: message.createdAt }) }
        }
        case 'createEvent': {
          const conversation = await ownConversationId(a.conversationId)
          if (typeof a.payload !== 'object' || a.payload === null || Array.isArray(a.payload)) throw errors.invalidPayload('payload must be an object')
          // Deterministic too: a turn run again (after a crash, or moved off a stopped worker) creates it once.
          const id = replyId(`${sourceId}:event`, events++)
          const { row: event, created } = await domain.appendBotEvent(integration, conversation.id, id, a.payload as JsonObject)
          if (created && event.conversationId === conversationId) ownSeqs.push(event.seq)
          return { event: eventView(event) }
        }
        case 'callAction': {
          // An action of an installed integration (`alias:action`), through the same path as the Runtime API's callAction.
          if (typeof a.type !== 'string' || a.type === '') throw errors.invalidPayload('client.callAction: type must be a non-empty string ("alias:action")')
          const input = a.input ?? {}
          if (typeof input !== 'object' || input === null || Array.isArray(input)) throw errors.invalidPayload('client.callAction: input must be an object')
          const colon = a.type.indexOf(':')
          if (colon <= 0) throw errors.invalidPayload(`client.callAction: "${a.type.slice(0, 200)}" is not an integration action: name it "alias:action" (the alias the integration is installed as)`)
          // Never undefined for `alias:action` (an alias the bot has no integration of is a 404 there).
          const output = await this.integrationAction(bot, a.type, input as JsonObject)
          return { output: output ?? {}, meta: { cached: false } }
        }
        case 'startTypingIndicator':
        case 'stopTypingIndicator': {
          const conversation = await ownConversationId(a.conversationId)
          const timeout = typeof a.timeout === 'number' && Number.isFinite(a.timeout) ? Math.min(MAX_TYPING_TIMEOUT_MS, Math.max(1, Math.trunc(a.timeout))) : TYPING_TTL_MS
          await publishTyping(this.pubsub, integration.id, conversation.id, method === 'startTypingIndicator', timeout)
          return {}
        }
        case 'getMessage':
          return { message: sandboxMessageView(await domain.getMessage(bot, String(a.id))) }
        case 'listMessages': {
          const conversation = await ownConversation(a.conversationId)
          const page = await domain.listMessages(bot, {
            conversationId: conversation.id, nextToken: typeof a.nextToken === 'string' ? a.nextToken : undefined,
            pageSize: typeof a.pageSize === 'number' ? a.pageSize : CHAT_PAGE_SIZE,
          })
          return { messages: page.items.map(sandboxMessageView), meta: { ...(page.next && { nextToken: page.next }) } }
        }
        case 'getConversation':
          await ownConversation(a.id)
          return { conversation: runtimeConversationView(await domain.getConversation(bot, String(a.id))) }
        case 'getUser':
          return { user: sandboxUserView(await domain.getUser(bot, String(a.id))) }
        case 'startHandoff':
        case 'endHandoff': {
          if (!handoffs) throw errors.invalidPayload('Human handoff is not available on this instance')
          const conversation = await ownConversationId(a.conversationId)
          if (method === 'endHandoff') return { handoff: await handoffs.endForBot(bot, conversation.id) }
          if (a.reason !== undefined && typeof a.reason !== 'string') throw errors.invalidPayload('reason must be a string')
          const userId = typeof a.userId === 'string' ? a.userId : undefined
          return { handoff: await handoffs.startForBot(bot, conversation.id, { reason: a.reason as string | undefined, userId }) }
        }
        case 'searchKnowledge': {
          const { answer, bestRelevance } = await searchForBotScored(this.store, bot.id, a, this.clock(), this.options.semanticRanking, this.options.kbMinScore ?? 0)
          // Recorded for the dashboard (unanswered questions); its id is the turn's and the search's place in it.
          await this.store.quality.recordKnowledgeSearch({
            botId: bot.id, id: replyId(`${sourceId}:kb`, searches++), conversationId, query: String(a.query), noAnswer: answer.noAnswer,
            bestRelevance, createdAt: this.clock(),
          }).catch(() => {})
          return answer
        }
        case 'composeKnowledgeAnswer': {
          const results = readPassages(a.results)
          const answers = this.options.knowledgeAnswers
          if (!answers || typeof a.question !== 'string' || results.length === 0 || conversationId === null) return { text: null, citations: results.map(citationOf) }
          const streamId = replyId(`${sourceId}:answer`, composed++)
          // Bot code's own answers (client.searchKnowledge with answer: true) are not streamed: it sends its own message.
          const stream = a.stream === false ? undefined : { integrationId: integration.id, conversationId, streamId, userId: bot.id }
          return answers.answer(modelCaller(conversationId, a.userId), a.question, results, stream, readGuardrails(a.guardrails))
        }
        case 'agentStep': {
          const agents = this.options.agentSteps
          if (!agents) return { kind: 'failed', error: 'no language model provider is configured on this server (docs/llm.md)' }
          if (conversationId === null) throw errors.invalidPayload('An agent card runs in a conversation')
          const streamId = replyId(`${sourceId}:agent`, agentSteps++)
          // What is left of the run's time limit, less a moment to send the fallback if the model does not answer.
          const timeoutMs = Math.max(1, this.units.limitsOf(bot).timeoutMs - (this.clock() - runStarted) - 500)
          return agents.step(modelCaller(conversationId, a.userId), agentStepInput(a), { integrationId: integration.id, conversationId, streamId, userId: bot.id }, timeoutMs)
        }
        case 'abortAnswerStream': {
          if (conversationId === null || typeof a.streamId !== 'string' || a.streamId.length > 100) throw errors.invalidPayload('streamId must be a string')
          await publishStreamSignal(this.pubsub, integration.id, conversationId, { type: 'message_stream_abort', streamId: a.streamId, conversationId })
          return {}
        }
        default:
          throw errors.invalidPayload(`Unknown client method "${method}"`)
      }
    }
    return {
      call,
      log: (level: LogLevel, text: string) => {
        logs.push({ id: uuidv7(), botId: bot.id, at: this.clock(), level, message: this.units.mapPositions(bot, text), conversationId })
      },
      flush: async () => {
        const rows = logs.splice(0)
        await this.store.appendBotLogs(rows).catch(() => {})
      },
      takeLogs: () => logs.splice(0),
      // Started again from the beginning (moved to another worker): its replies count from 0 again, so that
      // each gets the id it had the first time (and is found, not sent twice).
      restarted: () => {
        replies = 0
        events = 0
        searches = 0
        composed = 0
        agentSteps = 0
      },
      ownSeqs,
    }
  }
}
