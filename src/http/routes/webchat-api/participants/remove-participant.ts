import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

export default function removeParticipant(app: App): void {
  app.delete('/conversations/:id/participants/:userId', {
    schema: webchatSchema('removeParticipant', 'Remove a participant (the caller itself, to leave)', { params: webchatParams({ id: Type.String(), userId: Type.String() }) }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.removeParticipant(request.chatUser, request.params.id, request.params.userId)
    return {}
  })
}
