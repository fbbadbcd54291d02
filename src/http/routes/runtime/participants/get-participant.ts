import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { RuntimeUserSchema } from '../common.js'

export const ParticipantParams = Type.Object({ id: Type.String({ minLength: 1 }), userId: Type.String({ minLength: 1 }) })

export default runtimeOperation({
  id: 'getParticipant', api: 'runtime', method: 'GET', path: '/conversations/:id/participants/:userId', permission: 'runtime.read',
  installation: { params: { id: 'conversation', userId: 'user' } },
  summary: 'Get a participant of a conversation',
  params: ParticipantParams,
  response: Type.Object({ participant: RuntimeUserSchema }),
  run: async ({ bot, botChat, views }, { params }) => ({ participant: views.user(await botChat.getParticipant(bot, params.id, params.userId)) }),
})
