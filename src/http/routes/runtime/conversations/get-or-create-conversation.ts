import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeConversationView } from '../../../../domain/runtime-views.js'
import { CreatedMeta, DiscriminateByTags, RuntimeConversationSchema, runtimeSchema, StringMapPatch, TagsPatch } from '../common.js'

const Body = Type.Object({
  channel: Type.String({ minLength: 1, maxLength: 100 }),
  tags: TagsPatch,
  integrationName: Type.Optional(Type.String({ maxLength: 200 })),
  properties: Type.Optional(StringMapPatch),
  discriminateByTags: Type.Optional(DiscriminateByTags),
}, { additionalProperties: false })

export default function getOrCreateConversation(app: App): void {
  app.post('/conversations/get-or-create', {
    config: { permission: 'runtime.write', installation: {} },
    schema: runtimeSchema('getOrCreateConversation', 'The oldest conversation of the channel with the discriminating tags, created when none (concurrent calls create one)',
      { body: Body }, { 200: Type.Object({ conversation: RuntimeConversationSchema, meta: CreatedMeta }) }),
  }, async (request) => {
    const { value, created } = await app.services.botChat.getOrCreateConversation(request.runtimeBot, request.body as typeof request.body & { tags: Record<string, string> })
    return { conversation: runtimeConversationView(value), meta: { created } }
  })
}
