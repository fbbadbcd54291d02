import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { UserSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

export default function getParticipant(app: App): void {
  app.get('/conversations/:conversationId/participants/:userId', {
    schema: chatSchema('getParticipant', 'Get one participant of a conversation',
      { params: chatParams({ conversationId: Type.String(), userId: Type.String() }) }, { 200: Type.Object({ participant: UserSchema }) }),
  }, async (request) => {
    const { conversationId, userId } = request.params
    return { participant: userView(await app.services.chat.getParticipant(request.chatUser, conversationId, userId)) }
  })
}
