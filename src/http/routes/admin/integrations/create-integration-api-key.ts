import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { integrationApiKeyView } from '../../../../domain/admin-views.js'
import { NewTokenSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object({ integrationId: Type.String({ maxLength: 200 }), note: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false })

export default function createIntegrationApiKey(app: App): void {
  app.post('/integrations/iaks', {
    config: { permission: 'bots.keys' },
    schema: adminSchema('createIntegrationApiKey', 'An integration API key (the integration\'s BP_TOKEN for the Runtime API); its value is shown once', { body: Body }, { 201: NewTokenSchema }),
  }, async (request, reply) => {
    const key = await app.services.integrations.createApiKey(request.workspace.id, request.body.integrationId, request.body.note ?? '')
    return reply.code(201).send({ ...integrationApiKeyView(key), value: key.value })
  })
}
