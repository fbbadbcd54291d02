import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { userView } from '../../../../domain/chat-views.js'
import { ForeignId, UserFields, UserSchema } from '../../../schemas/chat.js'
import { chatParams, chatSchema } from '../common.js'

const Body = Type.Object({ id: Type.Optional(ForeignId), ...UserFields }, { additionalProperties: false })

export default function createUser(app: App): void {
  app.post('/users', {
    schema: chatSchema('createUser', 'Create a user and receive its key (shown once)', { params: chatParams(), body: Body },
      { 201: Type.Object({ user: UserSchema, key: Type.String() }) }, { authenticated: false }),
  }, async (request, reply) => {
    const { user, key } = await app.services.chat.createUser(request.integration, request.body)
    return reply.code(201).send({ user: userView(user), key })
  })
}
