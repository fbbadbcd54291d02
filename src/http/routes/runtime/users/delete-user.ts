import type { App } from '../../../types.js'
import { EmptyObject } from '../../../schemas/common.js'
import { IdParams, runtimeSchema } from '../common.js'

export default function deleteUser(app: App): void {
  app.delete('/users/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'user' } } },
    schema: runtimeSchema('deleteUser', 'Delete a user: they leave every conversation first (their streams end)', { params: IdParams }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.botChat.deleteUser(request.runtimeBot, request.params.id)
    return {}
  })
}
