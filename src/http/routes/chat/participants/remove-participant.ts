import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

export default function removeParticipant(app: App): void {
  app.delete('/conversations/:conversationId/participants/:userId', {
    schema: chatSchema('removeParticipant', 'Remove a participant (not the owner); their open streams end',
      { params: chatParams({ conversationId: Type.String(), userId: Type.String() }), body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.chat.removeParticipant(request.chatUser, request.params.conversationId, request.params.userId)
    return {}
  })
}
