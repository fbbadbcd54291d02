import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { DefinitionFields } from './common.js'

export default function validateIntegrationUpdate(app: App): void {
  app.put('/integrations/:id/validate', {
    config: { permission: 'bots.write' },
    schema: adminSchema('validateIntegrationUpdate', 'Check an updateIntegration body as updateIntegration would (`bp deploy --dryRun`), writing nothing: 200 `{}`, or the error updateIntegration would answer',
      { params: Type.Object({ id: Type.String() }), body: Type.Object(DefinitionFields, { additionalProperties: true }) }, { 200: Type.Object({}) }),
  }, async (request) => {
    await app.services.integrations.validateUpdate(request.workspace.id, request.params.id, request.body)
    return {}
  })
}
