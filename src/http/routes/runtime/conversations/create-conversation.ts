import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeConversationView } from '../../../../domain/runtime-views.js'
import { RuntimeConversationSchema, runtimeSchema, StringMapIn, TagsIn } from '../common.js'

const Body = Type.Object({
  channel: Type.String({ minLength: 1, maxLength: 100, description: 'Channel name (the chat integration\'s own conversations have "channel")' }),
  tags: TagsIn,
  integrationName: Type.Optional(Type.String({ maxLength: 200, description: 'Default: the bot\'s chat integration' })),
  properties: Type.Optional(StringMapIn),
}, { additionalProperties: false })

export default function createConversation(app: App): void {
  app.post('/conversations', {
    config: { permission: 'runtime.write', installation: {} },
    schema: runtimeSchema('createConversation', 'Create a conversation (no owner, no participant yet)', { body: Body },
      { 200: Type.Object({ conversation: RuntimeConversationSchema }) }),
  }, async (request) => ({
    conversation: runtimeConversationView(await app.services.botChat.createConversation(request.runtimeBot, request.body)),
  }))
}
