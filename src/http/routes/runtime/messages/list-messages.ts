import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeMessageView } from '../../../../domain/runtime-views.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { DateQuery, PageQuery, RuntimeMessageSchema, runtimeSchema, StringMapIn } from '../common.js'

const Query = Type.Object({
  ...PageQuery,
  conversationId: Type.Optional(Type.String({ maxLength: 200 })),
  tags: Type.Optional(StringMapIn),
  ...DateQuery,
})

export default function listMessages(app: App): void {
  app.get('/messages', {
    config: { permission: 'runtime.read', installation: { query: { conversationId: 'conversation' } } },
    schema: runtimeSchema('listMessages', 'List messages, newest first (of a conversation, or of all of the bot\'s integrations); dates apply to createdAt',
      { querystring: Query }, { 200: Type.Object({ messages: Type.Array(RuntimeMessageSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.botChat.listMessages(request.runtimeBot, request.query)
    return { messages: page.items.map(runtimeMessageView), meta: listMeta(page) }
  })
}
