import { Type } from 'typebox'
import type { App } from '../../types.js'
import { ListMeta, listMeta } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { EventListQuery, EventSchema } from './events-common.js'

export default function listEvents(app: App): void {
  app.get('/events', {
    config: { permission: 'runtime.read', installation: { query: { conversationId: 'conversation', userId: 'user', messageId: 'message', workflowId: 'workflow' } } },
    schema: runtimeSchema('listEvents', 'The bot\'s events (Runtime API events and the Chat API\'s custom events, type `custom`), newest first, filtered by type, conversation, user, message, workflow or status',
      { querystring: EventListQuery }, { 200: Type.Object({ events: Type.Array(EventSchema), meta: ListMeta }) }),
  }, async (request) => {
    const { nextToken, pageSize, ...filter } = request.query
    const page = await app.services.runtimeEvents.list(request.runtimeBot, filter, nextToken, pageSize)
    return { events: page.events, meta: listMeta(page) }
  })
}
