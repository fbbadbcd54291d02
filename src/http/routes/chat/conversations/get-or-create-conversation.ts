import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { conversationView } from '../../../../domain/chat-views.js'
import { ConversationSchema, ForeignId } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object({ id: ForeignId }, { additionalProperties: false })

export default function getOrCreateConversation(app: App): void {
  app.post('/conversations/get-or-create', {
    schema: chatSchema('getOrCreateConversation', 'Get a conversation by id, creating it (with the caller as owner) if missing',
      { params: chatParams(), body: Body }, { 201: Type.Object({ conversation: ConversationSchema }) }),
  }, async (request, reply) => {
    const conversation = await app.services.chat.getOrCreateConversation(request.chatUser, request.body.id)
    return reply.code(201).send({ conversation: conversationView(conversation) })
  })
}
