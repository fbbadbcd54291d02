import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { MAX_IMPORT_MESSAGES } from '../../../../domain/bot-chat-service.js'
import { runtimeMessageView } from '../../../../domain/runtime-views.js'
import type { JsonObject } from '../../../../store/store.js'
import { DiscriminateByTags, MessageFields, RuntimeMessageSchema, runtimeSchema, TagsIn } from '../common.js'

const Body = Type.Object({
  messages: Type.Array(Type.Object({
    payload: MessageFields.payload, userId: MessageFields.userId, conversationId: MessageFields.conversationId, type: MessageFields.type,
    tags: TagsIn, createdAt: Type.String({ maxLength: 64 }), discriminateByTags: DiscriminateByTags,
  }, { additionalProperties: false }), { maxItems: MAX_IMPORT_MESSAGES }),
}, { additionalProperties: false })

export default function importMessages(app: App): void {
  app.post('/messages/import-messages', {
    config: { permission: 'runtime.write', installation: (r) => (r.body as { messages: { conversationId: string; userId: string }[] }).messages.flatMap((m) => [{ kind: 'conversation' as const, id: m.conversationId }, { kind: 'user' as const, id: m.userId }]) },
    schema: runtimeSchema('importMessages', 'Append past messages in createdAt order, each got-or-created by its discriminating tags, without bot turns',
      { body: Body }, { 200: Type.Object({ messages: Type.Array(RuntimeMessageSchema) }) }),
  }, async (request) => {
    const messages = await app.services.botChat.importMessages(request.runtimeBot, request.body.messages.map((m) => ({ ...m, payload: m.payload as JsonObject })))
    return { messages: messages.map(runtimeMessageView) }
  })
}
