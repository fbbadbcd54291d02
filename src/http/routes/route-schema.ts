import { ErrorBody } from '../schemas/common.js'

const errorResponses = { '4XX': ErrorBody, '5XX': ErrorBody }

/**
 * The schema of one route: OpenAPI tag, operation id, summary and security, the route's own
 * params/query/body schemas, its success responses, and the shared error responses (every non-2xx
 * is the Botpress error body). Each API's `*Schema` helper fixes the tag and security.
 */
export function routeSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  tag: string,
  security: Record<string, string[]>[],
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
) {
  return { operationId, summary, tags: [tag], security, ...schema, response: { ...responses, ...errorResponses } }
}
