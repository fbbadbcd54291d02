/**
 * The sandboxed bot's client (docs/bot-code.md, "The client"): the Runtime API operations that make
 * sense inside a turn, with @botpress/client's names and shapes, served by the same domain service
 * as the Runtime API routes (BotChatService). The methods the client had before (createMessage,
 * getMessage, listMessages, getUser, getConversation) keep their chat-style fields too: their objects
 * are supersets of the Chat API's and the Runtime API's.
 */
import { errors } from '../lib/errors.js'
import type { BotChatService } from '../domain/bot-chat-service.js'
import { runtimeConversationView, runtimeMessageView, runtimeUserView, type RuntimeMessageView, type RuntimeUserView } from '../domain/runtime-views.js'
import type { BotChatMessage, BotChatUser, Tags } from '../store/bot-chat-store.js'
import type { BotRow, JsonObject } from '../store/store.js'

type Args = Record<string, unknown>

/** The Runtime API message, with the Chat API's payload (`type` inside) and metadata. */
export function sandboxMessageView(m: BotChatMessage): RuntimeMessageView & { metadata?: JsonObject } {
  return { ...runtimeMessageView(m), payload: m.payload, ...(m.metadata !== null && { metadata: m.metadata }) }
}

/** The Runtime API user, with the Chat API's profile. */
export function sandboxUserView(u: BotChatUser): RuntimeUserView & { profile?: string } {
  return { ...runtimeUserView(u), ...(u.profile !== null && { profile: u.profile }) }
}

/** A `tags` argument: undefined or a map of strings (400 otherwise; bounds are the domain's). */
export function optionalTags(value: unknown): Tags | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw errors.invalidPayload('tags must be an object of strings')
  for (const v of Object.values(value)) if (typeof v !== 'string') throw errors.invalidPayload('tags must be an object of strings')
  return value as Tags
}

const str = (a: Args, key: string): string => {
  const v = a[key]
  if (typeof v !== 'string' || v === '') throw errors.invalidPayload(`${key} must be a non-empty string`)
  return v
}
const optStr = (a: Args, key: string): string | undefined => (a[key] === undefined ? undefined : str(a, key))
/** A map argument (tags, properties, attributes): string values, null where `nulls` (updates). */
const map = (a: Args, key: string, nulls: boolean): Record<string, string | null> | undefined => {
  const v = a[key]
  if (v === undefined) return undefined
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw errors.invalidPayload(`${key} must be an object`)
  for (const x of Object.values(v)) if (typeof x !== 'string' && !(nulls && x === null)) throw errors.invalidPayload(`${key} values must be strings${nulls ? ' or null' : ''}`)
  return v as Record<string, string | null>
}
const tags = (a: Args) => (map(a, 'tags', false) ?? {}) as Tags
const strings = (a: Args, key: string): string[] | undefined => {
  const v = a[key]
  if (v === undefined) return undefined
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw errors.invalidPayload(`${key} must be an array of strings`)
  return v as string[]
}
const int = (a: Args, key: string): number | undefined => {
  const v = a[key]
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw errors.invalidPayload(`${key} must be an integer`)
  return v
}
const oneOf = <T extends string>(a: Args, key: string, values: readonly T[]): T | undefined => {
  const v = a[key]
  if (v === undefined) return undefined
  if (!values.includes(v as T)) throw errors.invalidPayload(`${key} must be one of ${values.join(', ')}`)
  return v as T
}
const dates = (a: Args) => ({ afterDate: optStr(a, 'afterDate'), beforeDate: optStr(a, 'beforeDate') })
const page = (a: Args) => ({ nextToken: optStr(a, 'nextToken'), pageSize: int(a, 'pageSize') })
const meta = (p: { next?: string | undefined }) => ({ ...(p.next && { nextToken: p.next }) })

/**
 * The runtime operations of the sandboxed client that are not chat-style: undefined for any other
 * method (the caller handles createMessage, createEvent, getMessage, listMessages, getUser,
 * getConversation and its own methods). They act on the bot's data exactly as the routes do.
 */
export function sandboxRuntimeCall(domain: BotChatService, bot: BotRow, method: string, a: Args): Promise<unknown> | undefined {
  switch (method) {
    // users
    case 'createUser':
      return domain.createUser(bot, { tags: tags(a), integrationName: optStr(a, 'integrationName'), name: optStr(a, 'name'), pictureUrl: optStr(a, 'pictureUrl'), properties: map(a, 'properties', false) as Tags | undefined, attributes: map(a, 'attributes', false) as Tags | undefined })
        .then((u) => ({ user: sandboxUserView(u) }))
    case 'getOrCreateUser':
      return domain.getOrCreateUser(bot, { tags: (map(a, 'tags', true) ?? {}) as Tags, integrationName: optStr(a, 'integrationName'), name: optStr(a, 'name'), pictureUrl: optStr(a, 'pictureUrl'), discriminateByTags: strings(a, 'discriminateByTags') })
        .then((r) => ({ user: sandboxUserView(r.value), meta: { created: r.created } }))
    case 'updateUser':
      return domain.updateUser(bot, str(a, 'id'), {
        tags: map(a, 'tags', true), properties: map(a, 'properties', true), attributes: map(a, 'attributes', true),
        ...(a.name !== undefined && { name: a.name === null ? null : str(a, 'name') }),
        ...(a.pictureUrl !== undefined && { pictureUrl: a.pictureUrl === null ? null : str(a, 'pictureUrl') }),
      }).then((u) => ({ user: sandboxUserView(u) }))
    case 'listUsers':
      return domain.listUsers(bot, { ...page(a), ...dates(a), conversationId: optStr(a, 'conversationId'), tags: map(a, 'tags', false) as Tags | undefined,
        rangeField: oneOf(a, 'rangeField', ['createdAt', 'updatedAt'] as const), sortField: oneOf(a, 'sortField', ['createdAt', 'updatedAt'] as const), sortDirection: oneOf(a, 'sortDirection', ['asc', 'desc'] as const) })
        .then((p) => ({ users: p.items.map(sandboxUserView), meta: meta(p) }))
    // conversations
    case 'createConversation':
      return domain.createConversation(bot, { channel: str(a, 'channel'), tags: tags(a), integrationName: optStr(a, 'integrationName'), properties: map(a, 'properties', false) as Tags | undefined })
        .then((c) => ({ conversation: runtimeConversationView(c) }))
    case 'getOrCreateConversation':
      return domain.getOrCreateConversation(bot, { channel: str(a, 'channel'), tags: (map(a, 'tags', true) ?? {}) as Tags, integrationName: optStr(a, 'integrationName'), discriminateByTags: strings(a, 'discriminateByTags') })
        .then((r) => ({ conversation: runtimeConversationView(r.value), meta: { created: r.created } }))
    case 'updateConversation':
      return domain.updateConversation(bot, str(a, 'id'), { tags: map(a, 'tags', true), properties: map(a, 'properties', true) })
        .then((c) => ({ conversation: runtimeConversationView(c) }))
    case 'listConversations':
      return domain.listConversations(bot, { ...page(a), ...dates(a), tags: map(a, 'tags', false) as Tags | undefined, participantIds: strings(a, 'participantIds'),
        channel: optStr(a, 'channel'), minMessageCount: int(a, 'minMessageCount'), maxMessageCount: int(a, 'maxMessageCount'),
        sortField: oneOf(a, 'sortField', ['createdAt', 'updatedAt'] as const), sortDirection: oneOf(a, 'sortDirection', ['asc', 'desc'] as const) })
        .then((p) => ({ conversations: p.items.map(runtimeConversationView), meta: meta(p) }))
    // participants
    case 'listParticipants':
      return domain.listParticipants(bot, str(a, 'id'), page(a)).then((p) => ({ participants: p.items.map(sandboxUserView), meta: meta(p) }))
    case 'addParticipant':
      return domain.addParticipant(bot, str(a, 'id'), str(a, 'userId')).then((u) => ({ participant: sandboxUserView(u) }))
    case 'getParticipant':
      return domain.getParticipant(bot, str(a, 'id'), str(a, 'userId')).then((u) => ({ participant: sandboxUserView(u) }))
    case 'removeParticipant':
      return domain.removeParticipant(bot, str(a, 'id'), str(a, 'userId')).then(() => ({}))
    // messages (createMessage, getMessage and listMessages are the caller's: deterministic reply ids)
    case 'updateMessage':
      return domain.updateMessage(bot, str(a, 'id'), { tags: map(a, 'tags', true), payload: a.payload === undefined ? undefined : objectArg(a, 'payload') })
        .then((m) => ({ message: sandboxMessageView(m) }))
    case 'deleteMessage':
      return domain.deleteMessage(bot, str(a, 'id')).then(() => ({}))
    // tags
    case 'listTagValues':
      return domain.listTagValues(bot, str(a, 'key'), oneOf(a, 'type', ['user', 'conversation', 'message'] as const) ?? 'conversation', page(a))
        .then((p) => ({ tags: p.items.map((value) => ({ value })), meta: meta(p) }))
    default:
      return undefined
  }
}

function objectArg(a: Args, key: string): JsonObject {
  const v = a[key]
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw errors.invalidPayload(`${key} must be an object`)
  return v as JsonObject
}
