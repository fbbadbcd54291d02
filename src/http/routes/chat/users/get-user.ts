import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { UserSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

export default function getUser(app: App): void {
  app.get('/users/me', {
    schema: chatSchema('getUser', 'Get the key\'s user', { params: chatParams() }, { 200: Type.Object({ user: UserSchema }) }),
  }, async (request) => ({ user: userView(request.chatUser) }))
}
