import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { UserSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object({ userId: Type.String({ minLength: 1 }) }, { additionalProperties: false })

export default function addParticipant(app: App): void {
  app.post('/conversations/:conversationId/participants', {
    schema: chatSchema('addParticipant', 'Add a user of this integration to a conversation the caller takes part in',
      { params: chatParams({ conversationId: Type.String() }), body: Body }, { 200: Type.Object({ participant: UserSchema }) }),
  }, async (request) => {
    const participant = await app.services.chat.addParticipant(request.chatUser, request.params.conversationId, request.body.userId)
    return { participant: userView(participant) }
  })
}
