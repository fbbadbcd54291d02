import type { App } from '../../types.js'
import receive from './receive.js'

/** {webhookUrl} of installed integrations: bodies of any type are read as text (at most 1 MB) and relayed. */
export async function integrationWebhookRoutes(app: App): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body))
  receive(app)
}
