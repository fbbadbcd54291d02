import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { EmptyBody } from '../../../schemas/common.js'
import { caller, ConversationParams, HandoffSchema } from './common.js'

export default function endBotHandoff(app: App): void {
  app.post('/bots/:id/handoffs/:conversationId/end', {
    config: { permission: 'handoffs.write' },
    schema: adminSchema('endBotHandoff',
      'Return the conversation to the bot (its holder, anyone while it waits, or a manager and above); the bot sees handoff_ended',
      { params: ConversationParams, body: Type.Optional(EmptyBody) }, { 200: Type.Object({ handoff: HandoffSchema }) }),
  }, async (request) => ({
    handoff: await app.services.handoffs.end(request.workspace.id, request.params.id, request.params.conversationId, caller(request)),
  }))
}
