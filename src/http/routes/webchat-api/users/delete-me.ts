import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

export default function deleteMe(app: App): void {
  app.delete('/users/me', {
    schema: webchatSchema('deleteUser', 'Delete the key\'s user (it leaves its conversations)', { params: webchatParams() }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.deleteUser(request.chatUser)
    return {}
  })
}
