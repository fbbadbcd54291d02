import type { App } from '../../types.js'
import { runtimeSchema } from './common.js'
import { EventIdParams, EventResponse } from './events-common.js'

export default function getEvent(app: App): void {
  app.get('/events/:id', {
    config: { permission: 'runtime.read', installation: { params: { id: 'event' } } },
    schema: runtimeSchema('getEvent', 'An event of the bot (Runtime API events, and the Chat API\'s custom events as type `custom`) with its delivery status',
      { params: EventIdParams }, { 200: EventResponse }),
  }, async (request) => ({ event: await app.services.runtimeEvents.get(request.runtimeBot, request.params.id) }))
}
