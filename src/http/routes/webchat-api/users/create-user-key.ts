import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatParams, webchatSchema } from '../common.js'

const Headers = Type.Object({ 'x-admin-secret': Type.Optional(Type.String({ maxLength: 1000 })) })

export default function createUserKey(app: App): void {
  app.post('/users/key', {
    schema: webchatSchema('createUserKey', 'A key for a user id your backend chooses (x-admin-secret: the chat integration\'s encryption key); the user is created on the key\'s first use',
      { params: webchatParams(), headers: Headers, body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), expiresAt: Type.Optional(Type.Number({ minimum: 0 })) }, { additionalProperties: false }) },
      { 200: Type.Object({ key: Type.String() }) }, { authenticated: false }),
  }, async (request) => ({ key: app.services.webchatApi.mintUserKey(request.integration, request.headers['x-admin-secret'], request.body.id, request.body.expiresAt) }))
}
