import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

export default function removeMessageFeedback(app: App): void {
  app.delete('/messages/:id/feedback', {
    schema: webchatSchema('removeMessageFeedback', 'Take back the user\'s feedback on a message', { params: webchatParams({ id: Type.String() }) }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.setMessageFeedback(request.chatUser, request.params.id, { value: null })
    return {}
  })
}
