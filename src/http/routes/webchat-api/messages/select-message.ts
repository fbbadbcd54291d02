import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { Empty, webchatParams, webchatSchema } from '../common.js'

/** In the client's types, used by no version of the UI: answered for a message the user can see, nothing recorded. */
export default function selectMessage(app: App): void {
  app.post('/messages/:id/select', {
    schema: webchatSchema('selectMessage', 'Mark a message as selected (accepted; Parley records nothing for it)', { params: webchatParams({ id: Type.String() }) }, { 200: Empty }),
  }, async (request) => {
    await app.services.chat.getMessage(request.chatUser, request.params.id)
    return {}
  })
}
