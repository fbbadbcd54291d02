import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatUserView } from '../../../../domain/webchat-api-views.js'
import { webchatParams, webchatSchema, WebchatUserSchema } from '../common.js'

export default function getParticipant(app: App): void {
  app.get('/conversations/:id/participants/:userId', {
    schema: webchatSchema('getParticipant', 'A participant of a conversation the caller takes part in', { params: webchatParams({ id: Type.String(), userId: Type.String() }) },
      { 200: Type.Object({ participant: WebchatUserSchema }) }),
  }, async (request) => ({ participant: webchatUserView(await app.services.chat.getParticipant(request.chatUser, request.params.id, request.params.userId)) }))
}
