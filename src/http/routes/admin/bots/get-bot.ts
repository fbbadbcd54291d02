import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botView } from '../../../../domain/admin-views.js'
import { can } from '../../../../domain/permissions.js'
import { BotSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function getBot(app: App): void {
  app.get('/bots/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getBot', 'A bot with its integrations (integrations.chat.webhookUrl is the Chat API base)',
      { params: Type.Object({ id: Type.String() }) }, { 200: Type.Object({ bot: BotSchema }) }),
  }, async (request) => {
    const bot = await app.services.bots.getBot(request.workspace.id, request.params.id)
    return { bot: botView(bot, app.services.config.publicUrl, can(request.role, 'bots.write'), app.services.config.webhookPublicUrl) }
  })
}
