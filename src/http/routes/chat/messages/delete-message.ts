import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

export default function deleteMessage(app: App): void {
  app.delete('/messages/:id', {
    schema: chatSchema('deleteMessage', 'Delete one of the caller\'s own messages', { params: chatParams({ id: Type.String() }), body: EmptyBody },
      { 200: EmptyObject }),
  }, async (request) => {
    await app.services.chat.deleteMessage(request.chatUser, request.params.id)
    return {}
  })
}
