import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { conversationView } from '../../../../domain/chat-views.js'
import { ConversationSchema, ForeignId } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object({ id: Type.Optional(ForeignId) }, { additionalProperties: false })

export default function createConversation(app: App): void {
  app.post('/conversations', {
    schema: chatSchema('createConversation', 'Create a conversation; the caller becomes its owner', { params: chatParams(), body: Body },
      { 201: Type.Object({ conversation: ConversationSchema }) }),
  }, async (request, reply) => {
    const conversation = await app.services.chat.createConversation(request.chatUser, request.body.id)
    return reply.code(201).send({ conversation: conversationView(conversation) })
  })
}
