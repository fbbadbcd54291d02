import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { IdParams, RuntimeUserSchema, runtimeSchema } from '../common.js'

const Body = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

export default function addParticipant(app: App): void {
  app.post('/conversations/:id/participants', {
    config: { permission: 'runtime.write', installation: { params: { id: 'conversation' }, body: { userId: 'user' } } },
    schema: runtimeSchema('addParticipant', 'Add a user to a conversation (a participant_added signal; the user can then read it through the Chat API)',
      { params: IdParams, body: Body }, { 200: Type.Object({ participant: RuntimeUserSchema }) }),
  }, async (request) => ({
    participant: runtimeUserView(await app.services.botChat.addParticipant(request.runtimeBot, request.params.id, request.body.userId)),
  }))
}
