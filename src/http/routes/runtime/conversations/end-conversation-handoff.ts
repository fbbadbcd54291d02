import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { HandoffSchema } from '../../admin/handoffs/common.js'
import { EmptyBody } from '../../../schemas/common.js'
import { runtimeSchema } from '../common.js'

export default function endConversationHandoff(app: App): void {
  app.post('/conversations/:id/handoff/end', {
    config: { permission: 'runtime.write', installation: { params: { id: 'conversation' } } },
    schema: runtimeSchema('endConversationHandoff', 'Parley: return the conversation to the bot (ends its open handoff; answers the latest one when none is open)',
      { params: Type.Object({ id: Type.String({ maxLength: 200 }) }), body: Type.Optional(EmptyBody) }, { 200: Type.Object({ handoff: HandoffSchema }) }),
  }, async (request) => ({
    handoff: await app.services.handoffs.endForBot(request.runtimeBot, request.params.id),
  }))
}
