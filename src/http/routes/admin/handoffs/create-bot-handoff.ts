import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { BotParams, HandoffSchema } from './common.js'

const Body = Type.Object({ conversationId: Type.String({ minLength: 1, maxLength: 200 }), reason: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: false })

export default function createBotHandoff(app: App): void {
  app.post('/bots/:id/handoffs', {
    config: { permission: 'handoffs.write' },
    schema: adminSchema('createBotHandoff', 'Hand one of the bot\'s conversations to a person (external helpdesks); answers the open handoff when there is one already',
      { params: BotParams, body: Body }, { 200: Type.Object({ handoff: HandoffSchema }) }),
  }, async (request) => ({
    handoff: await app.services.handoffs.start(request.workspace.id, request.params.id, request.body.conversationId, request.body.reason),
  }))
}
