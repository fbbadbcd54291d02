import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatMessageView } from '../../../../domain/webchat-api-views.js'
import { ListMeta, listMeta, NextTokenQuery } from '../../../schemas/common.js'
import { webchatParams, webchatSchema, WebchatMessageSchema } from '../common.js'

export default function listConversationMessages(app: App): void {
  app.get('/conversations/:id/messages', {
    schema: webchatSchema('listConversationMessages', 'A conversation\'s messages, newest first', { params: webchatParams({ id: Type.String() }), querystring: NextTokenQuery },
      { 200: Type.Object({ messages: Type.Array(WebchatMessageSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.chat.listMessages(request.chatUser, request.params.id, request.query.nextToken)
    return { messages: page.items.map(webchatMessageView), meta: listMeta(page) }
  })
}
