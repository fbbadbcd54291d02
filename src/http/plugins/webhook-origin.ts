import type { FastifyRequest } from 'fastify'
import { INTEGRATION_WEBHOOK_PREFIX } from '../../domain/admin-views.js'
import { errors } from '../../lib/errors.js'
import type { App } from '../types.js'

/** Always answered, on either host: a load balancer probes each one. */
const EITHER_HOST = new Set(['/healthz', '/readyz'])

/** `host[:port]`, lower-cased, without the protocol's default port. */
function normalHost(host: string, protocol: string): string {
  const lower = host.toLowerCase()
  const port = protocol === 'https:' ? ':443' : ':80'
  return lower.endsWith(port) ? lower.slice(0, -port.length) : lower
}

/**
 * config.webhookPublicUrl (PARLEY_WEBHOOK_PUBLIC_URL): integration webhooks on an origin of their own, so even an
 * answer a browser renders there shares nothing with the console. Requests are told apart by their Host
 * (X-Forwarded-Host behind a trusted proxy, PARLEY_TRUST_PROXY): on the webhook host only
 * `/integration-webhooks/…` (and the health probes) are served; on any other host `/integration-webhooks/…` is
 * refused. Both refusals are 403 with the error body. Nothing is checked when the setting is unset.
 */
export function registerWebhookOrigin(app: App, webhookPublicUrl: string | undefined): void {
  if (!webhookPublicUrl) return
  const url = new URL(webhookPublicUrl)
  const webhookHost = normalHost(url.host, url.protocol)
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const path = request.url.split('?', 1)[0]!
    const webhookPath = path === INTEGRATION_WEBHOOK_PREFIX || path.startsWith(`${INTEGRATION_WEBHOOK_PREFIX}/`)
    const onWebhookHost = normalHost(request.host ?? '', url.protocol) === webhookHost
    if (webhookPath && !onWebhookHost) {
      return done(errors.forbidden(`Integration webhooks are served at ${url.origin} only: use the integration's webhookUrl`))
    }
    if (!webhookPath && onWebhookHost && !EITHER_HOST.has(path)) {
      return done(errors.forbidden(`${url.origin} serves integration webhooks only (${INTEGRATION_WEBHOOK_PREFIX}/…)`))
    }
    done()
  })
}
