import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'

const Query = Type.Object({
  timeStart: Type.Optional(Type.String({ maxLength: 64 })),
  timeEnd: Type.Optional(Type.String({ maxLength: 64 })),
  level: Type.Optional(Type.String({ maxLength: 20 })),
  userId: Type.Optional(Type.String({ maxLength: 200 })),
  conversationId: Type.Optional(Type.String({ maxLength: 200 })),
  messageContains: Type.Optional(Type.String({ maxLength: 200 })),
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
})
const Log = Type.Object({ timestamp: Type.String(), level: Type.String(), message: Type.String(), conversationId: Type.Optional(Type.String()), botId: Type.Optional(Type.String()) })

export default function getIntegrationLogs(app: App): void {
  app.get('/integrations/:id/logs', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getIntegrationLogs', 'What Parley sent the integration and what failed (register, deliveries, webhooks, actions), oldest first',
      { params: Type.Object({ id: Type.String() }), querystring: Query }, { 200: Type.Object({ logs: Type.Array(Log), nextToken: Type.Optional(Type.String()) }) }),
  }, async (request) => {
    const page = await app.services.integrations.logs(request.workspace.id, request.params.id, request.query)
    const contains = request.query.messageContains
    return {
      logs: page.items.filter((l) => contains === undefined || l.message.includes(contains)).map((l) => ({
        timestamp: new Date(l.at).toISOString(), level: l.level, message: l.message,
        ...(l.conversationId !== null && { conversationId: l.conversationId }), ...(l.botId !== null && { botId: l.botId }),
      })),
      ...(page.next !== undefined && { nextToken: page.next }),
    }
  })
}
