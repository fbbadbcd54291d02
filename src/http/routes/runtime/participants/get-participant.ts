import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { RuntimeUserSchema, runtimeSchema } from '../common.js'

export const ParticipantParams = Type.Object({ id: Type.String({ minLength: 1 }), userId: Type.String({ minLength: 1 }) })

export default function getParticipant(app: App): void {
  app.get('/conversations/:id/participants/:userId', {
    config: { permission: 'runtime.read', installation: { params: { id: 'conversation', userId: 'user' } } },
    schema: runtimeSchema('getParticipant', 'Get a participant of a conversation', { params: ParticipantParams },
      { 200: Type.Object({ participant: RuntimeUserSchema }) }),
  }, async (request) => ({
    participant: runtimeUserView(await app.services.botChat.getParticipant(request.runtimeBot, request.params.id, request.params.userId)),
  }))
}
