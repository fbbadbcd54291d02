import { Type, type TProperties } from 'typebox'
import { IsoDate, JsonObjectSchema, StringMap } from '../../schemas/common.js'
import { routeSchema } from '../route-schema.js'

/**
 * Path params of a webchat API route: the client id (the chat integration's webhook id) plus the operation's own.
 * Botpress's webchat builds its base URL as `{apiUrl}/{clientId}`: with `apiUrl` = `{Parley}/webchat-api`.
 */
export const webchatParams = <P extends TProperties>(extra: P = {} as P) =>
  Type.Object({ clientId: Type.String({ description: 'The bot\'s webchat client id: its chat integration\'s webhook id (getBotWebchat)' }), ...extra })

/** Route schema of the webchat API (security: x-user-key, except where `authenticated: false`). */
export function webchatSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
  { authenticated = true } = {},
) {
  return routeSchema('webchat-api', authenticated ? [{ userKey: [] }] : [], `webchat${operationId[0]!.toUpperCase()}${operationId.slice(1)}`, summary, schema, responses)
}

export const WebchatUserSchema = Type.Object({
  id: Type.String(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  name: Type.Optional(Type.String()),
  pictureUrl: Type.Optional(Type.String()),
  data: Type.Optional(Type.Unknown()),
  attributes: Type.Optional(StringMap(Type.String())),
}, { additionalProperties: false })

export const WebchatMessageSchema = Type.Object({
  id: Type.String(),
  createdAt: IsoDate,
  payload: JsonObjectSchema,
  userId: Type.String(),
  conversationId: Type.String(),
  metadata: Type.Optional(JsonObjectSchema),
  feedback: Type.Optional(Type.Object({ value: Type.String(), comment: Type.Optional(Type.String()) }, { additionalProperties: false })),
}, { additionalProperties: false })

/** What the webchat's user routes take: `userData` and `attributes` may be JSON text. */
export const WebchatUserFields = {
  name: Type.Optional(Type.String({ maxLength: 1000 })),
  pictureUrl: Type.Optional(Type.String({ maxLength: 4096 })),
  userData: Type.Optional(Type.Union([JsonObjectSchema, Type.String({ maxLength: 1000 }), Type.Null()])),
  attributes: Type.Optional(Type.Union([StringMap(Type.Union([Type.String(), Type.Null()])), Type.String({ maxLength: 100_000 })])),
}

/** An empty JSON answer: the webchat client parses every response body, so none is ever empty. */
export const Empty = Type.Object({}, { additionalProperties: false })
