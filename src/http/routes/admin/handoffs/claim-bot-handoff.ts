import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { caller, ConversationParams, HandoffSchema } from './common.js'

const Body = Type.Object({ memberId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false })

export default function claimBotHandoff(app: App): void {
  app.post('/bots/:id/handoffs/:conversationId/claim', {
    config: { permission: 'handoffs.write' },
    schema: adminSchema('claimBotHandoff',
      'Claim the conversation\'s open handoff for the caller, or for `memberId` (assigning to another member needs manager or above). 409 ResourceLockedConflict when another member holds it; claiming one\'s own claim again changes nothing',
      { params: ConversationParams, body: Type.Optional(Body) }, { 200: Type.Object({ handoff: HandoffSchema }) }),
  }, async (request) => ({
    handoff: await app.services.handoffs.claim(request.workspace.id, request.params.id, request.params.conversationId, caller(request), request.body?.memberId),
  }))
}
