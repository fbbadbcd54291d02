import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

export default function deleteMessage(app: App): void {
  app.delete('/messages/:id', {
    schema: webchatSchema('deleteMessage', 'Delete one of the user\'s own messages', { params: webchatParams({ id: Type.String() }) }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.deleteMessage(request.chatUser, request.params.id)
    return {}
  })
}
