import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { conversationView } from '../../../../domain/chat-views.js'
import { ConversationSchema } from '../../../schemas/chat.js'
import { ListMeta, listMeta, NextTokenQuery } from '../../../schemas/common.js'
import { webchatParams, webchatSchema } from '../common.js'

export default function listConversations(app: App): void {
  app.get('/conversations', {
    schema: webchatSchema('listConversations', 'The conversations the user takes part in', { params: webchatParams(), querystring: NextTokenQuery },
      { 200: Type.Object({ conversations: Type.Array(ConversationSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.chat.listConversations(request.chatUser, request.query.nextToken)
    return { conversations: page.items.map(conversationView), meta: listMeta(page) }
  })
}
