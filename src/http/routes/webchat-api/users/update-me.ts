import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatParams, webchatSchema, WebchatUserFields, WebchatUserSchema } from '../common.js'

export default function updateMe(app: App): void {
  app.put('/users/me', {
    schema: webchatSchema('updateUser', 'Update the key\'s user: name, pictureUrl, userData (kept as JSON, at most 1000 characters), attributes (null removes one)',
      { params: webchatParams(), body: Type.Object(WebchatUserFields, { additionalProperties: false }) }, { 200: Type.Object({ user: WebchatUserSchema }) }),
  }, async (request) => ({ user: await app.services.webchatApi.updateUser(request.chatUser, request.body) }))
}
