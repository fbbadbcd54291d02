import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botView } from '../../../../domain/admin-views.js'
import { BotInputSchema, BotSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function updateBot(app: App): void {
  app.put('/bots/:id', {
    config: { permission: 'bots.write' },
    schema: adminSchema('updateBot', 'Update a bot; `code` deploys new bot code and sets deployedAt; tags and integrations set to null are removed',
      { params: Type.Object({ id: Type.String() }), body: BotInputSchema }, { 200: Type.Object({ bot: BotSchema }) }),
  }, async (request) => {
    const bot = await app.services.bots.updateBot(request.workspace.id, request.params.id, request.body)
    return { bot: botView(bot, app.services.config.publicUrl, true, app.services.config.webhookPublicUrl) }
  })
}
