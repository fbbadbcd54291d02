/*
 * The `client` of ctx: the host-owned calls (messages through the outgoing hooks, events, typing, handoff, knowledge,
 * webhook bodies) and the Runtime API operations passed to the host as they are.
 */
import { hostCall, passedThrough } from './host.js'
import { freeze, ownProperty, isArray, jsonParse, jsonStringify, objectKeys, ProxyCtor } from './intrinsics.js'
import type { Json } from './types.js'
import { describe, isObj } from './util.js'

export function runtimeMethods(call: (method: string, args: Json) => Promise<unknown>, argsOf: (method: string, a: unknown) => Json): Json {
  const out: Json = {}
  // The operation table's names (src/http/operations), given by the host: no list of the prelude's own.
  for (const name of passedThrough()) out[name] = async (a?: unknown) => call(name, argsOf(name, a))
  return out
}

/** `send`: client.createMessage's path (the outgoing hooks around the host's createMessage), given by hooks.ts. */
export function makeClient(event: Json, send: (args: Json) => Promise<unknown>): Json {
  const call = async (method: string, args: Json): Promise<unknown> => jsonParse(await hostCall(method, jsonStringify(args)))
  const argsOf = (method: string, a: unknown): Json => {
    if (a === undefined) return {}
    if (!isObj(a)) throw new Error('client.' + method + ' expects an object argument, got ' + describe(a))
    return a
  }
  const conversationOf = (method: string, a: Json): string => {
    const id = a.conversationId === undefined ? event.conversationId : a.conversationId
    if (typeof id !== 'string' || id === '') throw new Error('client.' + method + ': conversationId must be a non-empty string')
    return id
  }
  const idOf = (method: string, a: Json): string => {
    if (typeof a.id !== 'string' || a.id === '') throw new Error('client.' + method + ': id must be a non-empty string')
    return a.id
  }
  const client = freeze({
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
    searchKnowledge: async (a?: unknown) => searchKnowledge(event, argsOf('searchKnowledge', a)),
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
    // Runtime API operations (@botpress/client names and shapes), served by the host's domain service.
    ...runtimeMethods(call, argsOf),
  })
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
