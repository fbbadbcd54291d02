import { Type } from 'typebox'
import { RUNTIME_PAGE_SIZE, TAG_LIMITS } from '../../../domain/bot-chat-service.js'
import { IsoDate, JsonObjectSchema, StringMap } from '../../schemas/common.js'
import type { BotRow } from '../../../store/store.js'
import { routeSchema } from '../route-schema.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The x-bot-id bot the caller acts as (authenticated Runtime API scope). */
    runtimeBot: BotRow
  }
}

/** Route schema of the Runtime API (security: Bearer token and x-bot-id). */
export function runtimeSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
) {
  // One /openapi.json documents every API: the client's operation names repeat the Chat API's (createMessage, getUser…),
  // so the Runtime API's carry a prefix there (runtimeCreateMessage); the client's name leads the summary.
  const id = `runtime${operationId[0]!.toUpperCase()}${operationId.slice(1)}`
  return routeSchema('runtime', [{ bearer: [], botId: [] }], id, `${operationId}: ${summary}`, schema, responses)
}

// ---- schemas shared by the conversation, participant, message, user and tag operations ----

const mapOf = (value: ReturnType<typeof Type.String> | ReturnType<typeof Type.Union>, description: string) =>
  StringMap(value as ReturnType<typeof Type.String>, { minKeyLength: 1, maxKeyLength: TAG_LIMITS.maxKeyLength, description })
const Value = Type.String({ maxLength: TAG_LIMITS.maxValueLength })
const NullableValue = Type.Union([Value, Type.Null()])

/** Tags of a create (string values). */
export const TagsIn = mapOf(Value, `At most ${TAG_LIMITS.maxEntries} tags; keys 1-${TAG_LIMITS.maxKeyLength} characters, values at most ${TAG_LIMITS.maxValueLength}`)
/** Tags of an update or getOrCreate: null (or '') removes a tag. */
export const TagsPatch = mapOf(NullableValue, 'null or an empty string removes the key')
export const StringMapIn = mapOf(Value, 'A map of strings')
export const StringMapPatch = mapOf(NullableValue, 'null or an empty string removes the key')
export const TagsOut = StringMap(Type.String())

export const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) })
export const DiscriminateByTags = Type.Array(Type.String({ minLength: 1, maxLength: TAG_LIMITS.maxKeyLength }), {
  maxItems: TAG_LIMITS.maxEntries, description: 'Tags a match must have (with the given values); default: all given tags',
})

export const PageQuery = {
  nextToken: Type.Optional(Type.String({ maxLength: 4096, description: 'Token from the previous page\'s meta.nextToken' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: RUNTIME_PAGE_SIZE.max, description: `Default ${RUNTIME_PAGE_SIZE.default}` })),
}
export const DateQuery = {
  afterDate: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601; exclusive' })),
  beforeDate: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601; exclusive' })),
}
export const SortDirection = Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Default desc' })
export const DateField = Type.Union([Type.Literal('createdAt'), Type.Literal('updatedAt')])

export const RuntimeUserSchema = Type.Object({
  id: Type.String(), createdAt: IsoDate, updatedAt: IsoDate, tags: TagsOut,
  name: Type.Optional(Type.String()), pictureUrl: Type.Optional(Type.String()),
  properties: Type.Optional(TagsOut), attributes: Type.Optional(TagsOut),
}, { additionalProperties: false })

export const RuntimeConversationSchema = Type.Object({
  id: Type.String(), createdAt: IsoDate, updatedAt: IsoDate, channel: Type.String(),
  integration: Type.String({ description: 'Name of the integration the conversation belongs to (chat by default)' }),
  tags: TagsOut, messageCount: Type.Integer(), properties: Type.Optional(TagsOut),
}, { additionalProperties: false })

export const RuntimeMessageSchema = Type.Object({
  id: Type.String(), createdAt: IsoDate, updatedAt: IsoDate,
  type: Type.String({ description: 'One of the Chat API\'s payload types (text, image, choice, …)' }),
  payload: JsonObjectSchema,
  direction: Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')], { description: 'outgoing: written by the bot\'s user (id = the bot id)' }),
  userId: Type.String(), conversationId: Type.String(), tags: TagsOut,
}, { additionalProperties: false })

export const MessageFields = {
  payload: JsonObjectSchema,
  userId: Type.String({ minLength: 1, maxLength: 200, description: 'The author: the bot id for the bot\'s own (outgoing) messages, else a user of the conversation\'s integration' }),
  conversationId: Type.String({ minLength: 1, maxLength: 200 }),
  type: Type.String({ minLength: 1, maxLength: 100 }),
  schedule: Type.Optional(Type.Object({ dateTime: Type.Optional(Type.String()), delay: Type.Optional(Type.Number()) }, { description: 'Not supported on Parley (400)' })),
  origin: Type.Optional(Type.Literal('synthetic')),
}

export const CreatedMeta = Type.Object({ created: Type.Boolean() }, { additionalProperties: false })
