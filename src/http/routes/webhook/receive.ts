import { Type } from 'typebox'
import type { WebhookService } from '../../../domain/webhook-service.js'
import { IDEMPOTENCY_HEADERS, SIGNATURE_HEADER, WEBHOOK_PREFIX } from '../../../domain/webhook-service.js'
import type { FastifyRequest } from 'fastify'
import type { App } from '../../types.js'
import { WEBHOOK_METHODS, webhookRequestParts } from '../../webhook-request.js'
import { routeSchema } from '../route-schema.js'

const Params = Type.Object({ webhookId: Type.String({ description: "The webhook integration's webhook id" }) })
const Accepted = Type.Object({
  id: Type.String({ description: 'The delivery id (the same for a repeated idempotency key)' }),
  duplicate: Type.Boolean({ description: 'True when this idempotency key was delivered before: nothing new is processed' }),
})

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/**
 * {webhookUrl} and {webhookUrl}/…, any method: the body (JSON, or none) up to 100 MB streamed to durable storage
 * (413 beyond, while streaming), the method, sub-path, query and headers kept with it. 200 once the delivery is
 * queued; the bot processes it asynchronously (a `webhook` event with Botpress's { body, query, method, headers, path }).
 */
export default function receive(app: App, service: WebhookService): void {
  const handler = async (request: FastifyRequest<{ Params: { webhookId: string; '*'?: string } }>) => {
    const length = header(request.headers['content-length'])
    // destroyOnReturn: false keeps the socket for the error answer when reading stops early (413);
    // the rest of the body is then drained or cut by plugins/connection.ts.
    return await service.receive({
      webhookId: request.params.webhookId,
      request: webhookRequestParts(request),
      contentType: header(request.headers['content-type']),
      contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
      signature: header(request.headers[SIGNATURE_HEADER]),
      idempotencyKey: IDEMPOTENCY_HEADERS.map((h) => header(request.headers[h])).find((v) => v !== undefined),
      body: request.raw.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
    })
  }
  app.route({
    method: 'POST',
    url: `${WEBHOOK_PREFIX}/:webhookId`,
    schema: routeSchema('webhook', [], 'receiveWebhook', `Deliver a request to a bot's built-in webhook integration (any method and sub-path; a JSON body or none; optional ${SIGNATURE_HEADER}, idempotency-key)`,
      { params: Params }, { 200: Accepted }),
    handler,
  })
  // The other methods and the sub-paths: the same (the bot's event carries them as `method` and `path`); one operation in /openapi.json.
  // No HEAD twin of GET: a link checker's HEAD must not queue a delivery (405).
  app.route({ method: WEBHOOK_METHODS.filter((m) => m !== 'POST'), url: `${WEBHOOK_PREFIX}/:webhookId`, schema: { hide: true }, exposeHeadRoute: false, handler })
  app.route({ method: [...WEBHOOK_METHODS], url: `${WEBHOOK_PREFIX}/:webhookId/*`, schema: { hide: true }, exposeHeadRoute: false, handler })
}
