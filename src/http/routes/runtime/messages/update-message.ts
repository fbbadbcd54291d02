import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import type { JsonObject } from '../../../../store/store.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { IdParams, RuntimeMessageSchema, TagsPatch } from '../common.js'

export default runtimeOperation({
  id: 'updateMessage', api: 'runtime', method: 'PUT', path: '/messages/:id', permission: 'runtime.write', installation: { params: { id: 'message' } },
  summary: 'Merge tags into a message (null removes one) and/or replace its payload (same type); streams are not told',
  params: IdParams,
  body: Type.Object({
    tags: Type.Optional(TagsPatch),
    payload: Type.Optional(JsonObjectSchema),
  }, { additionalProperties: false }),
  response: Type.Object({ message: RuntimeMessageSchema }),
  run: async ({ bot, botChat, views }, { params, body }) => ({
    message: views.message(await botChat.updateMessage(bot, params.id, { tags: body.tags, payload: body.payload as JsonObject | undefined })),
  }),
})
