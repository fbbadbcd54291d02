import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { eventView } from '../../../../domain/chat-views.js'
import { EventSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

export default function getEvent(app: App): void {
  app.get('/events/:id', {
    schema: chatSchema('getEvent', 'Get a custom event of a conversation the caller takes part in', { params: chatParams({ id: Type.String() }) },
      { 200: Type.Object({ event: EventSchema }) }),
  }, async (request) => ({ event: eventView(await app.services.chat.getEvent(request.chatUser, request.params.id)) }))
}
