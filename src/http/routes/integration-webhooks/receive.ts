import type { FastifyReply, FastifyRequest } from 'fastify'
import { INTEGRATION_WEBHOOK_PREFIX } from '../../../domain/admin-views.js'
import type { App } from '../../types.js'
import { serveUntrusted } from '../../untrusted-content.js'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * The caller's headers, as the integration sees them; never its cookies: on Parley's origin they are Parley's own
 * (the console's session), and no integration may read them.
 */
function forwardedHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(request.headers)) if (v !== undefined && k !== 'cookie') headers[k] = Array.isArray(v) ? v.join(', ') : v
  return headers
}

/**
 * Any method and sub-path on an installed integration's webhookUrl: forwarded to the integration as
 * `webhook_received` with the raw request (method, sub-path, query, headers but cookies, body as text), and its
 * answer relayed: its status and body, served as untrusted bytes (src/http/untrusted-content.ts: sandboxed, never
 * active on this origin) with an allowlist of its headers, so channel verification handshakes work. The caller's
 * headers go inside the request only: the protocol headers are always Parley's own.
 */
export default function receive(app: App): void {
  const handler = async (request: FastifyRequest<{ Params: { webhookId: string; '*'?: string } }>, reply: FastifyReply) => {
    const url = request.raw.url ?? ''
    const q = url.indexOf('?')
    const sub = request.params['*']
    const answer = await app.services.integrationDelivery.webhook(request.params.webhookId, {
      method: request.method,
      path: sub === undefined || sub === '' ? '' : `/${sub}`,
      query: q >= 0 ? url.slice(q + 1) : '',
      headers: forwardedHeaders(request),
      body: typeof request.body === 'string' && request.body.length > 0 ? request.body : undefined,
    })
    const headers = answer.headers ?? {}
    serveUntrusted(reply, { contentType: headers['content-type'], embeddable: false, relayed: headers })
    return reply.code(answer.status >= 200 && answer.status < 600 ? answer.status : 502).send(answer.body)
  }
  for (const url of [`${INTEGRATION_WEBHOOK_PREFIX}/:webhookId`, `${INTEGRATION_WEBHOOK_PREFIX}/:webhookId/*`]) {
    app.route({
      method: [...METHODS],
      url,
      // Not in /openapi.json: any method, any body, the integration's own answer (no fixed response schema).
      schema: { hide: true },
      handler,
    })
  }
}
