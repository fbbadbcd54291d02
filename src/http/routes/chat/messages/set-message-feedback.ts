import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { messageView } from '../../../../domain/chat-views.js'
import { MessageSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

/** Parley's addition to the Chat API (no @botpress/chat method): the webchat's thumbs up/down. */
export default function setMessageFeedback(app: App): void {
  app.put('/messages/:id/feedback', {
    schema: chatSchema('setMessageFeedback',
      'Thumbs up or down on a bot message of a conversation the caller takes part in; recorded as the message\'s metadata.feedback and its `feedback` tag (null removes it)',
      {
        params: chatParams({ id: Type.String() }),
        body: Type.Object({
          value: Type.Union([Type.Literal('positive'), Type.Literal('negative'), Type.Null()]),
          comment: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
        }, { additionalProperties: false }),
      },
      { 200: Type.Object({ message: MessageSchema }) }),
  }, async (request) => ({
    message: messageView(await app.services.chat.setMessageFeedback(request.chatUser, request.params.id, request.body)),
  }))
}
