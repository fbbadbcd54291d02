import type { App } from '../../../types.js'
import { EmptyObject } from '../../../schemas/common.js'
import { IdParams, runtimeSchema } from '../common.js'

export default function deleteMessage(app: App): void {
  app.delete('/messages/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'message' } } },
    schema: runtimeSchema('deleteMessage', 'Delete a message (a message_deleted signal on its conversation\'s stream)', { params: IdParams }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.botChat.deleteMessage(request.runtimeBot, request.params.id)
    return {}
  })
}
