import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationApiKeyView } from '../../../../domain/admin-views.js'
import { TokenSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function listIntegrationApiKeys(app: App): void {
  app.get('/integrations/iaks', {
    config: { permission: 'bots.keys' },
    schema: adminSchema('listIntegrationApiKeys', 'An integration\'s API keys (values are never shown again)', { querystring: Type.Object({ integrationId: Type.String({ maxLength: 200 }) }) },
      { 200: Type.Object({ iaks: Type.Array(TokenSchema) }) }),
  }, async (request) => ({ iaks: (await app.services.integrations.listApiKeys(request.workspace.id, request.query.integrationId)).map(integrationApiKeyView) }))
}
