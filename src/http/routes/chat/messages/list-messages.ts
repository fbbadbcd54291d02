import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { messageView } from '../../../../domain/chat-views.js'
import { MessageSchema } from '../../../schemas/chat.js'
import { ListMeta, listMeta, NextTokenQuery } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

export default function listMessages(app: App): void {
  app.get('/conversations/:conversationId/messages', {
    schema: chatSchema('listMessages', 'List a conversation\'s messages, newest first',
      { params: chatParams({ conversationId: Type.String() }), querystring: NextTokenQuery },
      { 200: Type.Object({ messages: Type.Array(MessageSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.chat.listMessages(request.chatUser, request.params.conversationId, request.query.nextToken)
    return { messages: page.items.map(messageView), meta: listMeta(page) }
  })
}
