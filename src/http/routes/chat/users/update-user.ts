import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { UserFields, UserSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object(UserFields, { additionalProperties: false })

export default function updateUser(app: App): void {
  app.put('/users/me', {
    schema: chatSchema('updateUser', 'Update the key\'s user', { params: chatParams(), body: Body }, { 200: Type.Object({ user: UserSchema }) }),
  }, async (request) => ({ user: userView(await app.services.chat.updateUser(request.chatUser, request.body)) }))
}
