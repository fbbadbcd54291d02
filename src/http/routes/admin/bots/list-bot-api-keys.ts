import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botApiKeyView } from '../../../../domain/admin-views.js'
import { TokenSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function listBotApiKeys(app: App): void {
  app.get('/bots/baks', {
    config: { permission: 'bots.keys' },
    schema: adminSchema('listBotApiKeys', 'A bot\'s access tokens (values are never shown again)', { querystring: Type.Object({ botId: Type.String() }) },
      { 200: Type.Object({ baks: Type.Array(TokenSchema) }) }),
  }, async (request) => ({ baks: (await app.services.bots.listApiKeys(request.workspace.id, request.query.botId)).map(botApiKeyView) }))
}
