import type { App } from '../../../types.js'
import { EmptyObject } from '../../../schemas/common.js'
import { runtimeSchema } from '../common.js'
import { ParticipantParams } from './get-participant.js'

export default function removeParticipant(app: App): void {
  app.delete('/conversations/:id/participants/:userId', {
    config: { permission: 'runtime.write', installation: { params: { id: 'conversation', userId: 'user' } } },
    schema: runtimeSchema('removeParticipant', 'Remove a participant (not a Chat API conversation\'s owner); their streams of it end', { params: ParticipantParams }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.botChat.removeParticipant(request.runtimeBot, request.params.id, request.params.userId)
    return {}
  })
}
