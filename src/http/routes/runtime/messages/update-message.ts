import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeMessageView } from '../../../../domain/runtime-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { IdParams, RuntimeMessageSchema, runtimeSchema, TagsPatch } from '../common.js'

const Body = Type.Object({
  tags: Type.Optional(TagsPatch),
  payload: Type.Optional(JsonObjectSchema),
}, { additionalProperties: false })

export default function updateMessage(app: App): void {
  app.put('/messages/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'message' } } },
    schema: runtimeSchema('updateMessage', 'Merge tags into a message (null removes one) and/or replace its payload (same type); streams are not told',
      { params: IdParams, body: Body }, { 200: Type.Object({ message: RuntimeMessageSchema }) }),
  }, async (request) => ({
    message: runtimeMessageView(await app.services.botChat.updateMessage(request.runtimeBot, request.params.id, {
      tags: request.body.tags, payload: request.body.payload as JsonObject | undefined,
    })),
  }))
}
