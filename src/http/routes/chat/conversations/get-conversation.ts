import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { conversationView } from '../../../../domain/chat-views.js'
import { ConversationSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

export default function getConversation(app: App): void {
  app.get('/conversations/:id', {
    schema: chatSchema('getConversation', 'Get a conversation the caller takes part in', { params: chatParams({ id: Type.String() }) },
      { 200: Type.Object({ conversation: ConversationSchema }) }),
  }, async (request) => ({ conversation: conversationView(await app.services.chat.getConversation(request.chatUser, request.params.id)) }))
}
