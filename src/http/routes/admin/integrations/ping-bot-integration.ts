import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'

/** Parley: the health check of one installation (the integration's `ping` operation), also written to its logs. */
export default function pingBotIntegration(app: App): void {
  app.post('/bots/:id/integrations/:alias/ping', {
    config: { permission: 'bots.read' },
    schema: adminSchema('pingBotIntegration',
      'Parley: sends `ping` to the integration installed as `alias` in the bot (its @botpress/sdk server answers 200 when it runs); the outcome is also in getIntegrationLogs',
      { params: Type.Object({ id: Type.String({ maxLength: 200 }), alias: Type.String({ maxLength: 100 }) }) },
      {
        200: Type.Object({
          ok: Type.Boolean({ description: 'The integration answered 2xx' }),
          status: Type.Optional(Type.Integer({ description: 'Its HTTP status; absent when it could not be reached' })),
          latencyMs: Type.Integer(),
          message: Type.String(),
        }),
      }),
  }, async (request) => {
    const { bot } = await app.services.bots.getBot(request.workspace.id, request.params.id)
    return app.services.integrationOps.ping(bot, request.params.alias)
  })
}
