import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { CreatedMeta, DiscriminateByTags, RuntimeConversationSchema, StringMapPatch, TagsPatch } from '../common.js'

export default runtimeOperation({
  id: 'getOrCreateConversation', api: 'runtime', method: 'POST', path: '/conversations/get-or-create', permission: 'runtime.write', installation: {},
  summary: 'The oldest conversation of the channel with the discriminating tags, created when none (concurrent calls create one)',
  body: Type.Object({
    channel: Type.String({ minLength: 1, maxLength: 100 }),
    tags: TagsPatch,
    integrationName: Type.Optional(Type.String({ maxLength: 200 })),
    properties: Type.Optional(StringMapPatch),
    discriminateByTags: Type.Optional(DiscriminateByTags),
  }, { additionalProperties: false }),
  response: Type.Object({ conversation: RuntimeConversationSchema, meta: CreatedMeta }),
  run: async ({ bot, botChat, views }, { body }) => {
    const { value, created } = await botChat.getOrCreateConversation(bot, body as typeof body & { tags: Record<string, string> })
    return { conversation: views.conversation(value), meta: { created } }
  },
})
