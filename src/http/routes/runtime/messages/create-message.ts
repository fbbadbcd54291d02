import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeMessageView } from '../../../../domain/runtime-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { MessageFields, RuntimeMessageSchema, runtimeSchema, TagsIn } from '../common.js'

const Body = Type.Object({ ...MessageFields, tags: TagsIn }, { additionalProperties: false })

export default function createMessage(app: App): void {
  app.post('/messages', {
    config: { permission: 'runtime.write', installation: { body: { conversationId: 'conversation', userId: 'user' } } },
    schema: runtimeSchema('createMessage', 'Post a message: the bot\'s own (userId = the bot id, outgoing) or a user\'s (incoming, gives the bot a turn)',
      { body: Body }, { 200: Type.Object({ message: RuntimeMessageSchema }) }),
  }, async (request) => ({
    message: runtimeMessageView(await app.services.botChat.createMessage(request.runtimeBot, { ...request.body, payload: request.body.payload as JsonObject })),
  }))
}
