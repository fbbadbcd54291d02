import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { conversationView } from '../../../../domain/chat-views.js'
import { ConversationSchema } from '../../../schemas/chat.js'
import { webchatParams, webchatSchema } from '../common.js'

export default function createConversation(app: App): void {
  app.post('/conversations', {
    schema: webchatSchema('createConversation', 'Start a conversation (its start turn greets)', { params: webchatParams(), body: Type.Object({ _: Type.Optional(Type.String()) }, { additionalProperties: false }) },
      { 201: Type.Object({ conversation: ConversationSchema }) }),
  }, async (request, reply) => reply.code(201).send({ conversation: conversationView(await app.services.chat.createConversation(request.chatUser, undefined)) }))
}
