import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeConversationView, runtimeMessageView, runtimeUserView } from '../../../../domain/runtime-views.js'
import type { JsonObject } from '../../../../store/store.js'
import {
  DiscriminateByTags, MessageFields, RuntimeConversationSchema, RuntimeMessageSchema, runtimeSchema, RuntimeUserSchema, StringMapIn, TagsIn,
} from '../common.js'

const Body = Type.Object({
  userId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  user: Type.Optional(Type.Object({
    tags: TagsIn, integrationName: Type.Optional(Type.String({ maxLength: 200 })), name: Type.Optional(Type.String({ maxLength: 200 })),
    pictureUrl: Type.Optional(Type.String({ maxLength: 2048 })), properties: Type.Optional(StringMapIn), attributes: Type.Optional(StringMapIn),
    discriminateByTags: DiscriminateByTags,
  }, { additionalProperties: false })),
  conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  conversation: Type.Optional(Type.Object({
    channel: Type.String({ minLength: 1, maxLength: 100 }), tags: TagsIn, integrationName: Type.Optional(Type.String({ maxLength: 200 })),
    properties: Type.Optional(StringMapIn), discriminateByTags: DiscriminateByTags,
  }, { additionalProperties: false })),
  message: Type.Optional(Type.Object({
    payload: MessageFields.payload, type: MessageFields.type, tags: TagsIn, origin: MessageFields.origin, discriminateByTags: DiscriminateByTags,
  }, { additionalProperties: false })),
}, { additionalProperties: false })

export default function initializeIncomingMessage(app: App): void {
  app.post('/initialize-incoming-message', {
    config: { permission: 'runtime.write', installation: { body: { userId: 'user', conversationId: 'conversation' } } },
    schema: runtimeSchema('initializeIncomingMessage',
      'Get or create the user and the conversation (the user joins it), then optionally get or create an incoming message (a turn for the bot)',
      { body: Body },
      { 200: Type.Object({ user: RuntimeUserSchema, conversation: RuntimeConversationSchema, message: Type.Optional(RuntimeMessageSchema) }) }),
  }, async (request) => {
    const { message: m, ...rest } = request.body
    const result = await app.services.botChat.initializeIncomingMessage(request.runtimeBot, { ...rest, ...(m && { message: { ...m, payload: m.payload as JsonObject } }) })
    return {
      user: runtimeUserView(result.user),
      conversation: runtimeConversationView(result.conversation),
      ...(result.message && { message: runtimeMessageView(result.message) }),
    }
  })
}
