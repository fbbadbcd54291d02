import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationDefinitionView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams } from '../packages-common.js'
import { IntegrationDefinitionSchema } from './common.js'

export default function getPublicIntegrationById(app: App): void {
  app.get('/hub/integrations/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPublicIntegrationById', 'The hub by id: a built-in integration (also by a bot\'s own chat or webhook integration id) or a public (or unlisted) one',
      { params: IdParams }, { 200: Type.Object({ integration: IntegrationDefinitionSchema }) }),
  }, async (request) => ({ integration: integrationDefinitionView(await app.services.integrations.hubGetById(request.workspace.id, request.params.id), false) }))
}
