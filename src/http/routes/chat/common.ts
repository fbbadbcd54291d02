import { Type, type TProperties } from 'typebox'
import { routeSchema } from '../route-schema.js'

/** Path params of a Chat route: the webhook id plus the operation's own. */
export const chatParams = <P extends TProperties>(extra: P = {} as P) =>
  Type.Object({ webhookId: Type.String({ description: 'The chat integration\'s webhook id' }), ...extra })

/** Route schema of the Chat API (security: the x-user-key header, except where `authenticated: false`). */
export function chatSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
  { authenticated = true } = {},
) {
  return routeSchema('chat', authenticated ? [{ userKey: [] }] : [], operationId, summary, schema, responses)
}
