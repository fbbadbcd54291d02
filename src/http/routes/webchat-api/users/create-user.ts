import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatParams, webchatSchema, WebchatUserFields, WebchatUserSchema } from '../common.js'

export default function createUser(app: App): void {
  app.post('/users', {
    schema: webchatSchema('createUser', 'Create a user and receive its key', { params: webchatParams(), body: Type.Object(WebchatUserFields, { additionalProperties: false }) },
      { 201: Type.Object({ user: WebchatUserSchema, key: Type.String() }) }, { authenticated: false }),
  }, async (request, reply) => reply.code(201).send(await app.services.webchatApi.createUser(request.integration, request.body)))
}
