import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatUserView } from '../../../../domain/webchat-api-views.js'
import { webchatParams, webchatSchema, WebchatUserSchema } from '../common.js'

export default function addParticipant(app: App): void {
  app.post('/conversations/:id/participants', {
    schema: webchatSchema('addParticipant', 'Add a user to a conversation the caller takes part in',
      { params: webchatParams({ id: Type.String() }), body: Type.Object({ userId: Type.String({ minLength: 1 }) }, { additionalProperties: false }) },
      { 200: Type.Object({ participant: WebchatUserSchema }) }),
  }, async (request) => ({ participant: webchatUserView(await app.services.chat.addParticipant(request.chatUser, request.params.id, request.body.userId)) }))
}
