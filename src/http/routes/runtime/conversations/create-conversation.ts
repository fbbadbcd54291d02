import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { RuntimeConversationSchema, StringMapIn, TagsIn } from '../common.js'

export default runtimeOperation({
  id: 'createConversation', api: 'runtime', method: 'POST', path: '/conversations', permission: 'runtime.write', installation: {},
  summary: 'Create a conversation (no owner, no participant yet)',
  body: Type.Object({
    channel: Type.String({ minLength: 1, maxLength: 100, description: 'Channel name (the chat integration\'s own conversations have "channel")' }),
    tags: TagsIn,
    integrationName: Type.Optional(Type.String({ maxLength: 200, description: 'Default: the bot\'s chat integration' })),
    properties: Type.Optional(StringMapIn),
  }, { additionalProperties: false }),
  response: Type.Object({ conversation: RuntimeConversationSchema }),
  run: async ({ bot, botChat, views }, { body }) => ({ conversation: views.conversation(await botChat.createConversation(bot, body)) }),
})
