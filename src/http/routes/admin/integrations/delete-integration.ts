import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deleteIntegration(app: App): void {
  app.delete('/integrations/:id', {
    config: { permission: 'bots.write' },
    schema: adminSchema('deleteIntegration', 'Delete an integration definition (400 while a bot has it installed)', { params: Type.Object({ id: Type.String() }), body: EmptyBody },
      { 200: EmptyObject }),
  }, async (request) => {
    await app.services.integrations.delete(request.workspace.id, request.params.id)
    return {}
  })
}
