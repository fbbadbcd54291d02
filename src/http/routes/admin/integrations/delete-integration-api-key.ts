import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deleteIntegrationApiKey(app: App): void {
  app.delete('/integrations/iaks/:id', {
    config: { permission: 'bots.keys' },
    schema: adminSchema('deleteIntegrationApiKey', 'Revoke an integration API key', { params: Type.Object({ id: Type.String({ maxLength: 200 }) }), body: EmptyBody },
      { 200: EmptyObject }),
  }, async (request) => {
    await app.services.integrations.deleteApiKey(request.workspace.id, request.params.id)
    return {}
  })
}
