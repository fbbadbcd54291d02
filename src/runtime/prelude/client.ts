/*
 * The `client` of ctx: the host-owned calls (messages through the outgoing hooks, events, typing, handoff, knowledge,
 * webhook bodies) and the Runtime API operations passed to the host as they are.
 */
import { hostCall, passedThrough } from './host.js'
import { asyncIterator, freeze, ownProperty, isArray, jsonParse, jsonStringify, objectKeys, ProxyCtor, objectAssign } from './intrinsics.js'
import type { Json } from './types.js'
import { describe, isObj } from './util.js'
import { bot } from './state.js'

const call = async (method: string, args: Json): Promise<unknown> => jsonParse(await hostCall(method, jsonStringify(args)))
const argsOf = (method: string, a: unknown): Json => {
  if (a === undefined) return {}
  if (!isObj(a)) throw new Error('client.' + method + ' expects an object argument, got ' + describe(a))
  return a
}

let shared: Json | undefined
/**
 * The Runtime API operations passed to the host as they are (the operation table's names, given by the host: no list
 * of the prelude's own). They depend on nothing of the turn, so they are built once per VM and copied into each client:
 * building them for each hook's ctx took about 90 µs of an echo turn's ~300 in the sandbox.
 */
export function runtimeMethods(): Json {
  if (shared !== undefined) return shared
  const out: Json = {}
  for (const name of passedThrough()) out[name] = async (a?: unknown) => call(name, argsOf(name, a))
  shared = freeze(out)
  return shared
}

/**
 * `send`: client.createMessage's path (the outgoing hooks around the host's createMessage), given by hooks.ts.
 * `remainingMs`: what is left of the budget of the unit of user code calling (a model's answer is waited for within it).
 */
export function makeClient(event: Json, send: (args: Json) => Promise<unknown>, remainingMs: () => number): Json {
  const conversationOf = (method: string, a: Json): string => {
    const id = a.conversationId === undefined ? event.conversationId : a.conversationId
    if (typeof id !== 'string' || id === '') throw new Error('client.' + method + ': conversationId must be a non-empty string')
    return id
  }
  const idOf = (method: string, a: Json): string => {
    if (typeof a.id !== 'string' || a.id === '') throw new Error('client.' + method + ': id must be a non-empty string')
    return a.id
  }
  const own: Json = {
    createMessage: async (a?: unknown) => send(argsOf('createMessage', a)),
    createEvent: async (a?: unknown) => {
      const args = argsOf('createEvent', a)
      if (!isObj(args.payload)) throw new Error('client.createEvent: payload must be an object, got ' + describe(args.payload))
      return call('createEvent', { conversationId: conversationOf('createEvent', args), payload: args.payload })
    },
    // The webchat's typing indicator (a turn shows one on its own; this starts one for `timeout` ms, at most 60 s).
    startTypingIndicator: async (a?: unknown) => {
      const args = argsOf('startTypingIndicator', a)
      if (args.timeout !== undefined && (typeof args.timeout !== 'number' || !(args.timeout > 0))) throw new Error('client.startTypingIndicator: timeout must be a positive number of milliseconds, got ' + describe(args.timeout))
      const out: Json = { conversationId: conversationOf('startTypingIndicator', args) }
      if (args.timeout !== undefined) out.timeout = args.timeout
      return call('startTypingIndicator', out)
    },
    stopTypingIndicator: async (a?: unknown) => call('stopTypingIndicator', { conversationId: conversationOf('stopTypingIndicator', argsOf('stopTypingIndicator', a)) }),
    getMessage: async (a?: unknown) => call('getMessage', { id: idOf('getMessage', argsOf('getMessage', a)) }),
    listMessages: async (a?: unknown) => {
      const args = argsOf('listMessages', a)
      const out: Json = { conversationId: conversationOf('listMessages', args) }
      if (args.nextToken !== undefined) out.nextToken = args.nextToken
      if (args.pageSize !== undefined) out.pageSize = args.pageSize
      return call('listMessages', out)
    },
    getConversation: async (a?: unknown) => call('getConversation', { id: idOf('getConversation', argsOf('getConversation', a)) }),
    getUser: async (a?: unknown) => call('getUser', { id: idOf('getUser', argsOf('getUser', a)) }),
    searchKnowledge: async (a?: unknown) => {
      const args = argsOf('searchKnowledge', a)
      if (args.answer !== undefined && typeof args.answer !== 'boolean') throw new Error('client.searchKnowledge: answer must be true or false, got ' + describe(args.answer))
      const found = await searchKnowledge(event, args)
      if (args.answer !== true) return found
      // The configured model's answer from the passages found (docs/bot-code.md "Knowledge"); not streamed: the bot
      // sends (or not) a message of its own with it.
      const composeArgs: Json = { question: args.query, results: found.results, guardrails: bot.guardrails ?? {}, stream: false }
      if (typeof event.userId === 'string') composeArgs.userId = event.userId
      const composed = (found.results as Json[]).length === 0 ? { text: null, citations: [], noAnswer: true } : jsonParse(await hostCall('composeKnowledgeAnswer', jsonStringify(composeArgs))) as Json
      const answer: Json = { text: typeof composed.text === 'string' ? composed.text : null, citations: isArray(composed.citations) ? composed.citations : [] }
      if (composed.noAnswer === true) answer.noAnswer = true
      return { ...found, answer }
    },
    // Human handoff (README "Human handoff"): the conversation waits for a workspace member until endHandoff.
    startHandoff: async (a?: unknown) => {
      const args = argsOf('startHandoff', a)
      if (args.reason !== undefined && typeof args.reason !== 'string') throw new Error('client.startHandoff: reason must be a string, got ' + describe(args.reason))
      const out: Json = { conversationId: conversationOf('startHandoff', args) }
      if (args.reason !== undefined) out.reason = args.reason
      if (typeof event.userId === 'string') out.userId = event.userId
      return call('startHandoff', out)
    },
    endHandoff: async (a?: unknown) => call('endHandoff', { conversationId: conversationOf('endHandoff', argsOf('endHandoff', a)) }),
    // Webhook events only: a chunk of the raw body (README "Webhook integration").
    readWebhookBody: async (a?: unknown) => call('readWebhookBody', argsOf('readWebhookBody', a)),
    // A configured language model (docs/llm.md "From bot code"): @botpress/cognitive's CognitiveBeta input and output.
    generateText: async (a?: unknown) => call('generateText', llmArgs(event, argsOf('generateText', a), remainingMs())),
    generateTextStream: (a?: unknown) => textStream(event, argsOf('generateTextStream', a), remainingMs()),
  }
  // Runtime API operations (@botpress/client names and shapes), served by the host's domain service: copied, not built.
  const client = freeze(objectAssign(own, runtimeMethods()))
  // A method the client does not have fails with its name and the ones it has (not "not a function").
  return new ProxyCtor(client, {
    get(target: Json, prop: string | symbol): unknown {
      if (typeof prop !== 'string' || ownProperty.call(target, prop) || prop === 'then' || prop === 'toJSON' || prop in target) return target[prop as string]
      return async () => {
        throw new Error('client.' + prop + ' is not a method of the bot client (it has: ' + objectKeys(target).sort().join(', ') + ')')
      }
    },
  }) as Json
}

/** The host's arguments of a model call: the bot's input as it is, the user it is for, and the time it may take. */
function llmArgs(event: Json, input: Json, budgetMs: number): Json {
  const out: Json = { input, budgetMs }
  if (typeof event.userId === 'string') out.userId = event.userId
  return out
}

/**
 * client.generateTextStream: CognitiveBeta's chunks as they come (`{output, created}`, then `{output: '', finished:
 * true, toolCalls, metadata}`), read with `for await`. The host starts the model's answer on the first read and keeps
 * what arrives between reads; each read takes all of it.
 */
function textStream(event: Json, input: Json, budgetMs: number): Json {
  let streamId: string | undefined
  let buffered: Json[] = []
  let next = 0
  let done = false
  const read = async (): Promise<{ value: unknown; done: boolean }> => {
    for (;;) {
      if (next < buffered.length) return { value: buffered[next++], done: false }
      if (done) return { value: undefined, done: true }
      if (streamId === undefined) {
        const started = jsonParse(await hostCall('generateTextStream', jsonStringify(llmArgs(event, input, budgetMs)))) as Json
        streamId = started.streamId as string
      }
      const got = jsonParse(await hostCall('readTextStream', jsonStringify({ streamId }))) as Json
      buffered = isArray(got.chunks) ? (got.chunks as Json[]) : []
      next = 0
      done = got.done === true
    }
  }
  const iterator = { next: read, [asyncIterator]: () => iterator }
  return iterator as unknown as Json
}

/**
 * client.searchKnowledge and knowledge cards: the host searches; the answer is merged into `event.kb`
 * (`included`: knowledge bases queried, `results`: passages), so hooks running later see it.
 */
export async function searchKnowledge(event: Json, a: Json): Promise<Json> {
  if (typeof a.query !== 'string') throw new Error('client.searchKnowledge: query must be a string, got ' + describe(a.query))
  const args: Json = { query: a.query }
  if (a.knowledgeBases !== undefined) args.knowledgeBases = a.knowledgeBases
  if (a.limit !== undefined) args.limit = a.limit
  if (a.minScore !== undefined) args.minScore = a.minScore
  const answer = jsonParse(await hostCall('searchKnowledge', jsonStringify(args))) as Json
  const kb: Json = isObj(event.kb) ? event.kb : { included: [], results: [] }
  if (!isArray(kb.included)) kb.included = []
  if (!isArray(kb.results)) kb.results = []
  for (const k of answer.included as Json[]) if (!(kb.included as Json[]).some((x) => isObj(x) && x.id === k.id)) (kb.included as Json[]).push(k)
  for (const r of answer.results as Json[]) (kb.results as Json[]).push(r)
  event.kb = kb
  return answer
}
