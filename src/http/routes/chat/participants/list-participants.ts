import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { UserSchema } from '../../../schemas/chat.js'
import { ListMeta, listMeta, NextTokenQuery } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

export default function listParticipants(app: App): void {
  app.get('/conversations/:conversationId/participants', {
    schema: chatSchema('listParticipants', 'List a conversation\'s participants in the order they joined',
      { params: chatParams({ conversationId: Type.String() }), querystring: NextTokenQuery },
      { 200: Type.Object({ participants: Type.Array(UserSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.chat.listParticipants(request.chatUser, request.params.conversationId, request.query.nextToken)
    return { participants: page.items.map(userView), meta: listMeta(page) }
  })
}
