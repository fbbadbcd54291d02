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
  return routeSchema('runtime', [{ bearer: [], botId: [] }], operationId, summary, schema, responses)
}
