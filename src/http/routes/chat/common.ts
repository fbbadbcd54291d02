import { Type, type TProperties } from 'typebox'
import { ErrorBody } from '../../schemas/common.js'

/** Path params of a Chat route: the webhook id plus the operation's own. */
export const chatParams = <P extends TProperties>(extra: P = {} as P) =>
  Type.Object({ webhookId: Type.String({ description: 'The chat integration\'s webhook id' }), ...extra })

const errorResponses = { '4XX': ErrorBody, '5XX': ErrorBody }

/** Route schema: tags, summary, the x-user-key header for OpenAPI, and the shared error responses. */
export function chatSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
  { authenticated = true } = {},
) {
  return {
    operationId,
    summary,
    tags: ['chat'],
    ...(authenticated && { security: [{ userKey: [] }] }),
    ...schema,
    response: { ...responses, ...errorResponses },
  }
}
