import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { eventView } from '../../../../domain/chat-views.js'
import { EventSchema } from '../../../schemas/chat.js'
import { webchatParams, webchatSchema } from '../common.js'

export default function getEvent(app: App): void {
  app.get('/events/:id', {
    schema: webchatSchema('getEvent', 'An event of a conversation the user takes part in', { params: webchatParams({ id: Type.String() }) }, { 200: Type.Object({ event: EventSchema }) }),
  }, async (request) => ({ event: eventView(await app.services.chat.getEvent(request.chatUser, request.params.id)) }))
}
