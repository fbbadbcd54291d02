import type { App } from '../../types.js'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * Any method and sub-path on an installed integration's webhookUrl: forwarded to the integration as
 * `webhook_received` with the raw request (method, sub-path, query, headers, body as text), and its
 * answer (status, headers, body) relayed as is, so channel verification handshakes work. The
 * caller's headers go inside the request only: the protocol headers are always Parley's own.
 */
export default function receive(app: App): void {
  const handler = async (request: import('fastify').FastifyRequest<{ Params: { webhookId: string; '*'?: string } }>, reply: import('fastify').FastifyReply) => {
    const url = request.raw.url ?? ''
    const q = url.indexOf('?')
    const sub = request.params['*']
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(request.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v
    const answer = await app.services.integrationDelivery.webhook(request.params.webhookId, {
      method: request.method,
      path: sub === undefined || sub === '' ? '' : `/${sub}`,
      query: q >= 0 ? url.slice(q + 1) : '',
      headers,
      body: typeof request.body === 'string' && request.body.length > 0 ? request.body : undefined,
    })
    return reply.code(answer.status >= 100 && answer.status < 600 ? answer.status : 502).headers(answer.headers ?? {}).send(answer.body)
  }
  for (const url of ['/integration-webhooks/:webhookId', '/integration-webhooks/:webhookId/*']) {
    app.route({
      method: [...METHODS],
      url,
      // Not in /openapi.json: any method, any body, the integration's own answer (no fixed response schema).
      schema: { hide: true },
      handler,
    })
  }
}
