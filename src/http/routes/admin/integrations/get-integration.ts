import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationDefinitionView } from '../../../../domain/admin-views.js'
import { can } from '../../../../domain/permissions.js'
import { adminSchema } from '../common.js'
import { IntegrationDefinitionSchema } from './common.js'

export default function getIntegration(app: App): void {
  app.get('/integrations/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getIntegration', 'An integration definition of the workspace', { params: Type.Object({ id: Type.String() }) },
      { 200: Type.Object({ integration: IntegrationDefinitionSchema }) }),
  }, async (request) => ({
    integration: integrationDefinitionView(await app.services.integrations.get(request.workspace.id, request.params.id), can(request.role, 'bots.write')),
  }))
}
