import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

export default function deleteConversation(app: App): void {
  app.delete('/conversations/:id', {
    schema: chatSchema('deleteConversation', 'Delete a conversation with its messages, events and participants',
      { params: chatParams({ id: Type.String() }), body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.chat.deleteConversation(request.chatUser, request.params.id)
    return {}
  })
}
