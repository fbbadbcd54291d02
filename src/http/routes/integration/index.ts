import type { App } from '../../types.js'
import { errors } from '../../../lib/errors.js'
import getIntegrationSecrets from './get-integration-secrets.js'

/**
 * What an installed integration asks for itself (not for a bot) under /v1/integration: its API key
 * (`Authorization: Bearer iak_…`, createIntegrationApiKey) and nothing else (other tokens: 403).
 */
export async function integrationRoutes(app: App): Promise<void> {
  app.decorateRequest('integrationDefinitionId', '')
  app.addHook('onRequest', async (request) => {
    const principal = await app.services.auth.authenticate(request.headers.authorization)
    if (principal.kind !== 'integration') throw errors.forbidden('Only an integration API key (createIntegrationApiKey) may be used here')
    request.integrationDefinitionId = principal.definitionId
  })
  getIntegrationSecrets(app)
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The definition whose API key authenticated the request (/v1/integration). */
    integrationDefinitionId: string
  }
}
