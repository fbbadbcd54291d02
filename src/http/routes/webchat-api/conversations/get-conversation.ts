import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { conversationView } from '../../../../domain/chat-views.js'
import { ConversationSchema } from '../../../schemas/chat.js'
import { webchatParams, webchatSchema } from '../common.js'

export default function getConversation(app: App): void {
  app.get('/conversations/:id', {
    schema: webchatSchema('getConversation', 'A conversation the user takes part in', { params: webchatParams({ id: Type.String() }) }, { 200: Type.Object({ conversation: ConversationSchema }) }),
  }, async (request) => ({ conversation: conversationView(await app.services.chat.getConversation(request.chatUser, request.params.id)) }))
}
