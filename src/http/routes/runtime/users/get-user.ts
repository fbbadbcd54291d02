import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { IdParams, RuntimeUserSchema, runtimeSchema } from '../common.js'

export default function getUser(app: App): void {
  app.get('/users/:id', {
    config: { permission: 'runtime.read', installation: { params: { id: 'user' } } },
    schema: runtimeSchema('getUser', 'Get a user (the bot\'s own user has the bot\'s id)', { params: IdParams }, { 200: Type.Object({ user: RuntimeUserSchema }) }),
  }, async (request) => ({ user: runtimeUserView(await app.services.botChat.getUser(request.runtimeBot, request.params.id)) }))
}
