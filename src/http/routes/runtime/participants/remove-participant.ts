import { runtimeOperation } from '../../../operations/operation.js'
import { EmptyObject } from '../../../schemas/common.js'
import { ParticipantParams } from './get-participant.js'

export default runtimeOperation({
  id: 'removeParticipant', api: 'runtime', method: 'DELETE', path: '/conversations/:id/participants/:userId', permission: 'runtime.write',
  installation: { params: { id: 'conversation', userId: 'user' } },
  summary: 'Remove a participant (not a Chat API conversation\'s owner); their streams of it end',
  params: ParticipantParams,
  response: EmptyObject,
  run: async ({ bot, botChat }, { params }) => {
    await botChat.removeParticipant(bot, params.id, params.userId)
    return {}
  },
})
