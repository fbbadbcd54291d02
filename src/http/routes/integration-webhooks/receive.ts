import type { FastifyReply, FastifyRequest } from 'fastify'
import { INTEGRATION_WEBHOOK_PREFIX } from '../../../domain/admin-views.js'
import type { App } from '../../types.js'
import { serveUntrusted } from '../../untrusted-content.js'
import { WEBHOOK_METHODS, webhookRequestParts } from '../../webhook-request.js'

/**
 * Any method and sub-path on an installed integration's webhookUrl: forwarded to the integration as
 * `webhook_received` with the raw request (method, sub-path, query, headers but cookies, body as text), and its
 * answer relayed: its status and body, served as untrusted bytes (src/http/untrusted-content.ts: sandboxed, never
 * active on this origin) with an allowlist of its headers, so channel verification handshakes work. The caller's
 * headers go inside the request only: the protocol headers are always Parley's own.
 */
export default function receive(app: App): void {
  const handler = async (request: FastifyRequest<{ Params: { webhookId: string; '*'?: string } }>, reply: FastifyReply) => {
    const answer = await app.services.integrationDelivery.webhook(request.params.webhookId, {
      ...webhookRequestParts(request),
      body: typeof request.body === 'string' && request.body.length > 0 ? request.body : undefined,
    })
    const headers = answer.headers ?? {}
    serveUntrusted(reply, { contentType: headers['content-type'], embeddable: false, relayed: headers })
    return reply.code(answer.status >= 200 && answer.status < 600 ? answer.status : 502).send(answer.body)
  }
  for (const url of [`${INTEGRATION_WEBHOOK_PREFIX}/:webhookId`, `${INTEGRATION_WEBHOOK_PREFIX}/:webhookId/*`]) {
    app.route({
      method: [...WEBHOOK_METHODS],
      url,
      // Not in /openapi.json: any method, any body, the integration's own answer (no fixed response schema).
      schema: { hide: true },
      handler,
    })
  }
}
