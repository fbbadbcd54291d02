import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

export default function deleteConversation(app: App): void {
  app.delete('/conversations/:id', {
    schema: webchatSchema('deleteConversation', 'Delete a conversation the user takes part in', { params: webchatParams({ id: Type.String() }) }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.deleteConversation(request.chatUser, request.params.id)
    return {}
  })
}
