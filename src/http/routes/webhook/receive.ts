import { Type } from 'typebox'
import type { WebhookService } from '../../../domain/webhook-service.js'
import { IDEMPOTENCY_HEADERS, SIGNATURE_HEADER, WEBHOOK_PREFIX } from '../../../domain/webhook-service.js'
import type { App } from '../../types.js'
import { routeSchema } from '../route-schema.js'

const Params = Type.Object({ webhookId: Type.String({ description: "The webhook integration's webhook id" }) })
const Accepted = Type.Object({
  id: Type.String({ description: 'The delivery id (the same for a repeated idempotency key)' }),
  duplicate: Type.Boolean({ description: 'True when this idempotency key was delivered before: nothing new is processed' }),
})

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/**
 * POST {webhookUrl}: any JSON body up to 100 MB, streamed to durable storage (413 beyond, while
 * streaming). 200 once the delivery is queued; the bot processes it asynchronously.
 */
export default function receive(app: App, service: WebhookService): void {
  app.post(`${WEBHOOK_PREFIX}/:webhookId`, {
    schema: routeSchema('webhook', [], 'receiveWebhook', `Deliver a JSON body to a bot's webhook integration (optional ${SIGNATURE_HEADER}, idempotency-key)`,
      { params: Params }, { 200: Accepted }),
  }, async (request) => {
    const length = header(request.headers['content-length'])
    // destroyOnReturn: false keeps the socket for the error answer when reading stops early (413);
    // the rest of the body is then drained or cut by plugins/connection.ts.
    return await service.receive({
      webhookId: request.params.webhookId,
      contentType: header(request.headers['content-type']),
      contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
      signature: header(request.headers[SIGNATURE_HEADER]),
      idempotencyKey: IDEMPOTENCY_HEADERS.map((h) => header(request.headers[h])).find((v) => v !== undefined),
      body: request.raw.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
    })
  })
}
