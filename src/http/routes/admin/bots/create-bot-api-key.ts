import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botApiKeyView } from '../../../../domain/admin-views.js'
import { NewTokenSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object({ botId: Type.String(), note: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false })

export default function createBotApiKey(app: App): void {
  app.post('/bots/baks', {
    config: { permission: 'bots.keys' },
    schema: adminSchema('createBotApiKey', 'Create a bot access token (for the Files API); its value is shown once', { body: Body }, { 201: NewTokenSchema }),
  }, async (request, reply) => {
    const key = await app.services.bots.createApiKey(request.workspace.id, request.body.botId, request.body.note ?? '')
    return reply.code(201).send({ ...botApiKeyView(key), value: key.value })
  })
}
