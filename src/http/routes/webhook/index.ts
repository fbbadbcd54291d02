import type { WebhookService } from '../../../domain/webhook-service.js'
import type { App } from '../../types.js'
import receive from './receive.js'

/**
 * The webhook integration's endpoint, `POST /webhooks/{webhookId}` (its webhookUrl). The scope's
 * only body "parser" leaves the request stream unread: the handler streams it to the blob store
 * under the 100 MB limit.
 */
export async function webhookRoutes(app: App, options: { service: WebhookService }): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
  receive(app, options.service)
}
