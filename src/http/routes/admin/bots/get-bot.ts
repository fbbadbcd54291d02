import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { botView } from '../../../../domain/admin-views.js'
import { llmIntegrationView } from '../../../../domain/llm/llm-interface.js'
import { can } from '../../../../domain/permissions.js'
import { errors } from '../../../../lib/errors.js'
import { BotSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

export default function getBot(app: App): void {
  app.get('/bots/:id', {
    config: { permission: 'bots.read', ownBotKey: true },
    schema: adminSchema('getBot', 'A bot with its integrations (integrations.chat.webhookUrl is the Chat API base)',
      { params: Type.Object({ id: Type.String() }) }, { 200: Type.Object({ bot: BotSchema }) }),
  }, async (request) => {
    // zai with a plain @botpress/client Client asks for the bot "undefined" (the Client has no botId): the x-bot-id bot.
    const header = request.headers['x-bot-id']
    const id = request.params.id === 'undefined' && typeof header === 'string' && header !== '' ? header : request.params.id
    if (request.principal.kind === 'bot' && id !== request.principal.botId) throw errors.forbidden('A bot API key may read only its own bot')
    const bot = await app.services.bots.getBot(request.workspace.id, id)
    const view = botView(bot, app.services.config.publicUrl, can(request.role, 'bots.write'), app.services.config.webhookPublicUrl)
    // The configured LLM providers, as integrations implementing the llm interface (a bot's own integration of the name wins).
    const llm = Object.fromEntries(app.services.llmInterface.providers().map((p) => [p, llmIntegrationView(p, view.createdAt)]))
    return { bot: { ...view, integrations: { ...llm, ...view.integrations } } }
  })
}
