import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'

export default function deleteBot(app: App): void {
  app.delete('/bots/:id', {
    config: { permission: 'bots.delete' },
    schema: adminSchema('deleteBot', 'Delete a bot with its conversations, users, messages and files',
      { params: Type.Object({ id: Type.String() }), body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.botRemoval.deleteBot(request.workspace.id, request.params.id)
    return {}
  })
}
