import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatMessageView } from '../../../../domain/webchat-api-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { webchatParams, webchatSchema, WebchatMessageSchema } from '../common.js'

export default function updateMessage(app: App): void {
  app.put('/messages/:id', {
    schema: webchatSchema('updateMessage', 'Replace the metadata of one of the user\'s own messages (its payload cannot change)',
      { params: webchatParams({ id: Type.String() }), body: Type.Object({ payload: Type.Optional(JsonObjectSchema), metadata: Type.Optional(JsonObjectSchema) }, { additionalProperties: false }) },
      { 200: Type.Object({ message: WebchatMessageSchema }) }),
  }, async (request) => ({
    message: webchatMessageView(await app.services.webchatApi.updateMessage(request.chatUser, request.params.id, { payload: request.body.payload, metadata: request.body.metadata as JsonObject | undefined })),
  }))
}
