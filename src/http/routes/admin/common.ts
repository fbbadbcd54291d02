import { ErrorBody } from '../../schemas/common.js'

const errorResponses = { '4XX': ErrorBody, '5XX': ErrorBody }

/** Route schema for the Admin API: tags, summary, security for OpenAPI, shared error responses. */
export function adminSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
  { workspaceScoped = true } = {},
) {
  return {
    operationId,
    summary,
    tags: ['admin'],
    security: [(workspaceScoped ? { bearer: [], workspaceId: [] } : { bearer: [] }) as Record<string, string[]>],
    ...schema,
    response: { ...responses, ...errorResponses },
  }
}

export const pageMeta = (next: string | undefined) => ({ ...(next && { nextToken: next }) })
