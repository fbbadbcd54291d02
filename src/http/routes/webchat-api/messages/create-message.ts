import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { errors } from '../../../../lib/errors.js'
import { webchatMessageView } from '../../../../domain/webchat-api-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { validateMessagePayload } from '../../../schemas/validate-payload.js'
import { webchatParams, webchatSchema, WebchatMessageSchema } from '../common.js'

const Body = Type.Object({
  conversationId: Type.String({ minLength: 1 }),
  payload: Type.Object({ type: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: true }),
  metadata: Type.Optional(JsonObjectSchema),
  replyTo: Type.Optional(Type.String({ maxLength: 100 })),
}, { additionalProperties: false })

export default function createMessage(app: App): void {
  app.post('/messages', {
    schema: webchatSchema('createMessage', 'Send a message (a button\'s answer `{type:"text", text: label, value}` is stored as its value; an upload\'s `fileId` is kept in the metadata)',
      { params: webchatParams(), body: Body }, { 201: Type.Object({ message: WebchatMessageSchema }) }),
  }, async (request, reply) => {
    const { conversationId, metadata, replyTo } = request.body
    const given = replyTo === undefined ? (metadata as JsonObject | undefined) : { ...(metadata as JsonObject | undefined), replyTo }
    const { payload, metadata: stored } = app.services.webchatApi.incoming(request.body.payload as JsonObject, given)
    const problem = validateMessagePayload(payload)
    if (problem) throw errors.invalidPayload(problem)
    const message = await app.services.chat.createMessage(request.integration, request.chatUser, conversationId, payload, stored)
    return reply.code(201).send({ message: webchatMessageView(message) })
  })
}
