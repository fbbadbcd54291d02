import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeConversationView } from '../../../../domain/runtime-views.js'
import { IdParams, RuntimeConversationSchema, runtimeSchema } from '../common.js'

export default function getConversation(app: App): void {
  app.get('/conversations/:id', {
    config: { permission: 'runtime.read', installation: { params: { id: 'conversation' } } },
    schema: runtimeSchema('getConversation', 'Get one of the bot\'s conversations', { params: IdParams },
      { 200: Type.Object({ conversation: RuntimeConversationSchema }) }),
  }, async (request) => ({
    conversation: runtimeConversationView(await app.services.botChat.getConversation(request.runtimeBot, request.params.id)),
  }))
}
