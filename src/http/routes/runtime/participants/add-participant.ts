import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { IdParams, RuntimeUserSchema } from '../common.js'

export default runtimeOperation({
  id: 'addParticipant', api: 'runtime', method: 'POST', path: '/conversations/:id/participants', permission: 'runtime.write',
  installation: { params: { id: 'conversation' }, body: { userId: 'user' } },
  summary: 'Add a user to a conversation (a participant_added signal; the user can then read it through the Chat API)',
  params: IdParams,
  body: Type.Object({ userId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
  response: Type.Object({ participant: RuntimeUserSchema }),
  run: async ({ bot, botChat, views }, { params, body }) => ({ participant: views.user(await botChat.addParticipant(bot, params.id, body.userId)) }),
})
