import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeMessageView } from '../../../../domain/runtime-views.js'
import { IdParams, RuntimeMessageSchema, runtimeSchema } from '../common.js'

export default function getMessage(app: App): void {
  app.get('/messages/:id', {
    config: { permission: 'runtime.read', installation: { params: { id: 'message' } } },
    schema: runtimeSchema('getMessage', 'Get a message of the bot\'s conversations', { params: IdParams }, { 200: Type.Object({ message: RuntimeMessageSchema }) }),
  }, async (request) => ({ message: runtimeMessageView(await app.services.botChat.getMessage(request.runtimeBot, request.params.id)) }))
}
