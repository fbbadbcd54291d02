import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationDefinitionView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { NameVersionParams } from '../packages-common.js'
import { IntegrationDefinitionSchema } from './common.js'

export default function getPublicIntegration(app: App): void {
  app.get('/hub/integrations/:name/:version', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPublicIntegration', 'The hub: the built-in chat (0.7.6) and webhook (1.1.4), or a public (or unlisted) integration of any workspace, by name and version',
      { params: NameVersionParams }, { 200: Type.Object({ integration: IntegrationDefinitionSchema }) }),
  }, async (request) => ({ integration: integrationDefinitionView(await app.services.integrations.hubGet(request.params.name, request.params.version), false) }))
}
