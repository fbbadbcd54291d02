import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatParams, webchatSchema, WebchatUserSchema } from '../common.js'

export default function getMe(app: App): void {
  app.get('/users/me', {
    schema: webchatSchema('getUser', 'The key\'s user', { params: webchatParams() }, { 200: Type.Object({ user: WebchatUserSchema }) }),
  }, async (request) => ({ user: await app.services.webchatApi.userView(request.chatUser) }))
}
