import type { App } from '../../../types.js'
import { EmptyObject } from '../../../schemas/common.js'
import { IdParams, runtimeSchema } from '../common.js'

export default function deleteConversation(app: App): void {
  app.delete('/conversations/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'conversation' } } },
    schema: runtimeSchema('deleteConversation', 'Delete a conversation with its messages and events (its streams end)', { params: IdParams }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.botChat.deleteConversation(request.runtimeBot, request.params.id)
    return {}
  })
}
