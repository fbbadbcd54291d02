import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatMessageView } from '../../../../domain/webchat-api-views.js'
import { webchatParams, webchatSchema, WebchatMessageSchema } from '../common.js'

export default function getMessage(app: App): void {
  app.get('/messages/:id', {
    schema: webchatSchema('getMessage', 'A message of a conversation the user takes part in', { params: webchatParams({ id: Type.String() }) }, { 200: Type.Object({ message: WebchatMessageSchema }) }),
  }, async (request) => ({ message: webchatMessageView(await app.services.chat.getMessage(request.chatUser, request.params.id)) }))
}
