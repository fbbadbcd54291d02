import type { FastifyRequest } from 'fastify'
import type { App } from '../types.js'
import { runtimeSchema } from '../routes/runtime/common.js'
import { tablesSchema } from '../routes/tables/common.js'
import type { BotOperation } from './operation.js'

/**
 * The route of an operation (src/http/operations/operation.ts): its method, path, permission and schemas
 * (documented in /openapi.json under the API's tag), and a handler that runs its domain call with the
 * request's validated params, query string and body.
 */
export function registerOperation<C>(app: App, op: BotOperation<C>, contextOf: (request: FastifyRequest) => C): void {
  const schemaOf = op.api === 'runtime' ? runtimeSchema : tablesSchema
  app.route({
    method: op.method,
    url: op.path,
    config: { permission: op.permission, ...(op.installation && { installation: op.installation }) },
    schema: schemaOf(op.id, op.summary, {
      ...(op.params && { params: op.params }), ...(op.query && { querystring: op.query }), ...(op.body && { body: op.body }),
    }, { 200: op.response }),
    handler: async (request) => op.run(contextOf(request), { params: request.params, query: request.query, body: request.body }),
  })
}
