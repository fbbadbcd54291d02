import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deleteBotApiKey(app: App): void {
  app.delete('/bots/baks/:id', {
    config: { permission: 'bots.keys' },
    schema: adminSchema('deleteBotApiKey', 'Revoke a bot access token', { params: Type.Object({ id: Type.String() }), body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.bots.deleteApiKey(request.workspace.id, request.params.id)
    return {}
  })
}
