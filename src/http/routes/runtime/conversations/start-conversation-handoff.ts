import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { HandoffSchema } from '../../admin/handoffs/common.js'
import { runtimeSchema } from '../common.js'

const Body = Type.Object({
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
  userId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The user the handoff is for, when the conversation has no owner' })),
}, { additionalProperties: false })

export default function startConversationHandoff(app: App): void {
  app.post('/conversations/:id/handoff', {
    config: { permission: 'runtime.write', installation: { params: { id: 'conversation' }, body: { userId: 'user' } } },
    schema: runtimeSchema('startConversationHandoff',
      'Parley: hand the conversation to a person (README "Human handoff"); answers the open handoff when there is one. Until it ends, the user\'s messages run no hooks or workflows',
      { params: Type.Object({ id: Type.String({ maxLength: 200 }) }), body: Type.Optional(Body) }, { 200: Type.Object({ handoff: HandoffSchema }) }),
  }, async (request) => ({
    handoff: await app.services.handoffs.startForBot(request.runtimeBot, request.params.id, { reason: request.body?.reason, userId: request.body?.userId }),
  }))
}
