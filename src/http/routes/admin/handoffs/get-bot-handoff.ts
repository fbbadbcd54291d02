import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { ConversationParams, HandoffSchema } from './common.js'

export default function getBotHandoff(app: App): void {
  app.get('/bots/:id/handoffs/:conversationId', {
    config: { permission: 'handoffs.read' },
    schema: adminSchema('getBotHandoff', 'The conversation\'s open handoff, else its latest one, with its internal notes',
      { params: ConversationParams }, { 200: Type.Object({ handoff: HandoffSchema }) }),
  }, async (request) => ({
    handoff: await app.services.handoffs.get(request.workspace.id, request.params.id, request.params.conversationId),
  }))
}
