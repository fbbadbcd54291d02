import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationDefinitionView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { CreateIntegrationBody, IntegrationDefinitionSchema } from './common.js'

export default function createIntegration(app: App): void {
  app.post('/integrations', {
    config: { permission: 'bots.write' },
    schema: adminSchema('createIntegration', 'Define an integration served elsewhere (an @botpress/sdk integration at `url`), private to the workspace',
      { body: CreateIntegrationBody }, { 201: Type.Object({ integration: IntegrationDefinitionSchema }) }),
  }, async (request, reply) => {
    const row = await app.services.integrations.create(request.workspace.id, request.body)
    return reply.code(201).send({ integration: integrationDefinitionView(row, true) })
  })
}
