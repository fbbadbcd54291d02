import { routeSchema } from '../route-schema.js'

/** Route schema of the Admin API (security: Bearer token, plus x-workspace-id on workspace routes). */
export function adminSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
  { workspaceScoped = true } = {},
) {
  return routeSchema('admin', [workspaceScoped ? { bearer: [], workspaceId: [] } : { bearer: [] }], operationId, summary, schema, responses)
}

