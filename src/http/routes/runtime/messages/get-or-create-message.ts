import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeMessageView } from '../../../../domain/runtime-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { CreatedMeta, DiscriminateByTags, MessageFields, RuntimeMessageSchema, runtimeSchema, TagsPatch } from '../common.js'

const Body = Type.Object({
  ...MessageFields, payload: Type.Optional(MessageFields.payload), tags: TagsPatch, discriminateByTags: Type.Optional(DiscriminateByTags),
}, { additionalProperties: false })

export default function getOrCreateMessage(app: App): void {
  app.post('/messages/get-or-create', {
    config: { permission: 'runtime.write', installation: { body: { conversationId: 'conversation', userId: 'user' } } },
    schema: runtimeSchema('getOrCreateMessage', 'The conversation\'s oldest message with the discriminating tags, created when none (concurrent calls create one)',
      { body: Body }, { 200: Type.Object({ message: RuntimeMessageSchema, meta: CreatedMeta }) }),
  }, async (request) => {
    const { value, created } = await app.services.botChat.getOrCreateMessage(request.runtimeBot, { ...request.body, payload: (request.body.payload ?? {}) as JsonObject })
    return { message: runtimeMessageView(value), meta: { created } }
  })
}
