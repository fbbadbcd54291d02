import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { ArchiveConversationSchema, ArchiveQuery, conversationView } from './archive-schemas.js'

export default function listBotConversations(app: App): void {
  app.get('/bots/:id/conversations', {
    config: { permission: 'conversations.read' },
    schema: adminSchema('listBotConversations', 'The bot\'s conversations, latest activity first, found by message text, user id or tag value, date range, failed turns and handoffs (the console)',
      {
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ ...ArchiveQuery, nextToken: Type.Optional(Type.String({ maxLength: 512 })) }),
      },
      { 200: Type.Object({ conversations: Type.Array(ArchiveConversationSchema), meta: Type.Object({ nextToken: Type.Optional(Type.String()) }) }) }),
  }, async (request) => {
    const { nextToken, ...query } = request.query
    const page = await app.services.archive.search(request.workspace.id, request.params.id, query, nextToken)
    return { conversations: page.items.map(conversationView), meta: { ...(page.next && { nextToken: page.next }) } }
  })
}
