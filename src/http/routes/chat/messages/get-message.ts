import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { messageView } from '../../../../domain/chat-views.js'
import { MessageSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

export default function getMessage(app: App): void {
  app.get('/messages/:id', {
    schema: chatSchema('getMessage', 'Get a message of a conversation the caller takes part in', { params: chatParams({ id: Type.String() }) },
      { 200: Type.Object({ message: MessageSchema }) }),
  }, async (request) => ({ message: messageView(await app.services.chat.getMessage(request.chatUser, request.params.id)) }))
}
