import type { App } from '../../../types.js'
import { EmptyBody, EmptyObject } from '../../../schemas/common.js'
import { chatParams, chatSchema } from '../common.js'

export default function deleteUser(app: App): void {
  app.delete('/users/me', {
    schema: chatSchema('deleteUser', 'Delete the key\'s user, its keys and its participations', { params: chatParams(), body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.chat.deleteUser(request.chatUser)
    return {}
  })
}
