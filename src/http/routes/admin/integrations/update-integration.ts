import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationDefinitionView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { DefinitionFields, IntegrationDefinitionSchema } from './common.js'

export default function updateIntegration(app: App): void {
  app.put('/integrations/:id', {
    config: { permission: 'bots.write' },
    schema: adminSchema('updateIntegration', 'Change an integration definition (url, dev, channels, actions, configuration schemas…): parts given replace the stored ones',
      { params: Type.Object({ id: Type.String() }), body: Type.Object(DefinitionFields, { additionalProperties: true }) },
      { 200: Type.Object({ integration: IntegrationDefinitionSchema }) }),
  }, async (request) => ({
    integration: integrationDefinitionView(await app.services.integrations.update(request.workspace.id, request.params.id, request.body), true),
  }))
}
