import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { CreateIntegrationBody } from './common.js'

export default function validateIntegrationCreation(app: App): void {
  app.post('/integrations/validate', {
    config: { permission: 'bots.write' },
    schema: adminSchema('validateIntegrationCreation', 'Check a createIntegration body as createIntegration would (`bp deploy --dryRun`), writing nothing: 200 `{}`, or the error createIntegration would answer',
      { body: CreateIntegrationBody }, { 200: Type.Object({}) }),
  }, async (request) => {
    await app.services.integrations.validateCreate(request.workspace.id, request.body)
    return {}
  })
}
