import type { FastifyRequest } from 'fastify'

/** The methods a webhookUrl answers (the built-in webhook's and an installed integration's). */
export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/** What a webhookUrl's handler knows of the request besides its body. */
export interface WebhookRequestParts {
  method: string
  /** The part after {webhookUrl}: '' or '/…'. */
  path: string
  /** The query string without '?'. */
  query: string
  /** The caller's headers, never its cookies. */
  headers: Record<string, string>
}

/**
 * The request on `{webhookUrl}` or `{webhookUrl}/*` (routes of both webhook kinds): its method, sub-path, raw
 * query and headers. Never the caller's cookies: on Parley's origin they are Parley's own (the console's session),
 * and neither a bot nor an integration may read them.
 */
export function webhookRequestParts(request: FastifyRequest<{ Params: { '*'?: string } }>): WebhookRequestParts {
  const url = request.raw.url ?? ''
  const q = url.indexOf('?')
  const sub = request.params['*']
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(request.headers)) if (v !== undefined && k !== 'cookie') headers[k] = Array.isArray(v) ? v.join(', ') : v
  return { method: request.method, path: sub === undefined || sub === '' ? '' : `/${sub}`, query: q >= 0 ? url.slice(q + 1) : '', headers }
}
