import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { LlmCaller } from '../../../domain/llm/llm-usage.js'
import { routeSchema } from '../route-schema.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The x-bot-id bot the caller acts as (authenticated cognitive API scope). */
    cognitiveBot: import('../../../store/store.js').BotRow
  }
}

/** Route schema of the v2 cognitive API (security: Bearer token and x-bot-id, as the Runtime API). */
export function cognitiveSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(operationId: string, summary: string, schema: S, responses: R) {
  return routeSchema('cognitive', [{ bearer: [], botId: [] }], operationId, summary, schema, responses)
}

export const AnyObject = Type.Object({}, { additionalProperties: true })
export { CognitiveRequestBody } from '../../operations/cognitive.js'

/** Who the call is for (the usage records' caller). */
export function caller(request: FastifyRequest): LlmCaller {
  return { workspaceId: request.cognitiveBot.workspaceId, botId: request.cognitiveBot.id }
}

/** Aborted when the caller goes away before its answer was sent (the provider call is abandoned). */
export function callerGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('the caller went away'))
  })
  return controller.signal
}
