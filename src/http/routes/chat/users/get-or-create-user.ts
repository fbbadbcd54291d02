import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { UserFields, UserSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object(UserFields, { additionalProperties: false })

export default function getOrCreateUser(app: App): void {
  app.post('/users/get-or-create', {
    schema: chatSchema('getOrCreateUser', 'Get the key\'s user, creating it for a valid JWT key naming a new id', { params: chatParams(), body: Body },
      { 201: Type.Object({ user: UserSchema }) }),
  }, async (request, reply) => {
    const key = request.headers['x-user-key']
    const user = await app.services.chat.getOrCreateUser(request.integration, Array.isArray(key) ? undefined : key, request.body)
    return reply.code(201).send({ user: userView(user) })
  })
}
