import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { eventView } from '../../../../domain/chat-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { EventSchema } from '../../../schemas/chat.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { webchatParams, webchatSchema } from '../common.js'

const Body = Type.Object({
  conversationId: Type.String({ minLength: 1 }),
  payload: Type.Object({ type: Type.Union([Type.Literal('custom'), Type.Literal('conversation_started')]), data: Type.Optional(JsonObjectSchema) }, { additionalProperties: false }),
  bindConversation: Type.Optional(Type.Boolean()),
  bindUser: Type.Optional(Type.Boolean()),
}, { additionalProperties: false })

export default function createEvent(app: App): void {
  app.post('/events', {
    schema: webchatSchema('createEvent', 'A custom event for the bot, or `conversation_started` (not stored: answers `data.status.isInitial`, true until a user has written in the conversation)',
      { params: webchatParams(), body: Body }, { 201: Type.Object({ event: EventSchema }) }),
  }, async (request, reply) => {
    const event = await app.services.webchatApi.createEvent(request.integration, request.chatUser, request.body.conversationId, request.body.payload as JsonObject)
    return reply.code(201).send({ event: eventView(event) })
  })
}
