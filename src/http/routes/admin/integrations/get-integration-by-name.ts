import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationDefinitionView } from '../../../../domain/admin-views.js'
import { can } from '../../../../domain/permissions.js'
import { adminSchema } from '../common.js'
import { IntegrationDefinitionSchema } from './common.js'

export default function getIntegrationByName(app: App): void {
  app.get('/integrations/:name/:version', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getIntegrationByName', 'The workspace\'s integration of this name and version (`latest`: the last created)',
      { params: Type.Object({ name: Type.String({ maxLength: 200 }), version: Type.String({ maxLength: 100 }) }) },
      { 200: Type.Object({ integration: IntegrationDefinitionSchema }) }),
  }, async (request) => ({
    integration: integrationDefinitionView(
      await app.services.integrations.getByName(request.workspace.id, request.params.name, request.params.version), can(request.role, 'bots.write')),
  }))
}
