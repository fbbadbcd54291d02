import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { eventView } from '../../../../domain/chat-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { EventSchema } from '../../../schemas/chat.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object({ conversationId: Type.String({ minLength: 1 }), payload: JsonObjectSchema }, { additionalProperties: false })

export default function createEvent(app: App): void {
  app.post('/events', {
    schema: chatSchema('createEvent', 'Send a custom event into a conversation the caller takes part in', { params: chatParams(), body: Body },
      { 201: Type.Object({ event: EventSchema }) }),
  }, async (request, reply) => {
    const event = await app.services.chat.createEvent(request.integration, request.chatUser, request.body.conversationId, request.body.payload as JsonObject)
    return reply.code(201).send({ event: eventView(event) })
  })
}
