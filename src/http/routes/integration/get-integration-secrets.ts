import { Type } from 'typebox'
import type { App } from '../../types.js'
import { routeSchema } from '../route-schema.js'
import { StringMap } from '../../schemas/common.js'

/** Parley: the secret values of the calling integration's definition, for its own process environment (SECRET_<NAME>). */
export default function getIntegrationSecrets(app: App): void {
  app.get('/secrets', {
    schema: routeSchema('integration', [{ bearer: [] }], 'getIntegrationSecrets',
      'Parley: the values of the integration\'s `secrets` (createIntegration/updateIntegration), for its own key only; `node --import parley/integration-secrets` puts them in SECRET_<NAME> as the Botpress CLI\'s generated code reads them',
      {},
      { 200: Type.Object({ secrets: StringMap(Type.String()) }) }),
  }, async (request) => ({ secrets: await app.services.integrationOps.secrets(request.integrationDefinitionId) }))
}
