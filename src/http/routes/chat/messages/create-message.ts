import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { messageView } from '../../../../domain/chat-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { MessagePayloadSchema, MessageSchema } from '../../../schemas/chat.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object(
  { conversationId: Type.String({ minLength: 1 }), payload: MessagePayloadSchema, metadata: Type.Optional(JsonObjectSchema) },
  { additionalProperties: false },
)

export default function createMessage(app: App): void {
  app.post('/messages', {
    schema: chatSchema('createMessage', 'Post a message into a conversation the caller takes part in', { params: chatParams(), body: Body },
      { 201: Type.Object({ message: MessageSchema }) }),
  }, async (request, reply) => {
    const { conversationId, payload, metadata } = request.body
    const message = await app.services.chat.createMessage(request.integration, request.chatUser, conversationId, payload as JsonObject, metadata as JsonObject | undefined)
    return reply.code(201).send({ message: messageView(message) })
  })
}
