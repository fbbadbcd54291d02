import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botView } from '../../../../domain/admin-views.js'
import { BotInputSchema, BotSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function createBot(app: App): void {
  app.post('/bots', {
    config: { permission: 'bots.write' },
    schema: adminSchema('createBot', 'Create a bot; `integrations: { chat: { enabled: true } }` gives it a Chat API webhook', { body: BotInputSchema },
      { 201: Type.Object({ bot: BotSchema }) }),
  }, async (request, reply) => {
    const bot = await app.services.bots.createBot(request.workspace.id, request.body)
    return reply.code(201).send({ bot: botView(bot, app.services.config.publicUrl, true, app.services.config.webhookPublicUrl) })
  })
}
