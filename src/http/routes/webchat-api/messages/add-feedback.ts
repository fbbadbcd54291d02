import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

export default function addMessageFeedback(app: App): void {
  app.put('/messages/:id/feedback', {
    schema: webchatSchema('addMessageFeedback', 'Thumbs up or down on one of the bot\'s messages (the last one given wins)',
      {
        params: webchatParams({ id: Type.String() }),
        body: Type.Object({ value: Type.Union([Type.Literal('positive'), Type.Literal('negative')]), comment: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false }),
      }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.setMessageFeedback(request.chatUser, request.params.id, request.body)
    return {}
  })
}
