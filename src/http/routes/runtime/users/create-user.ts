import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { RuntimeUserSchema, runtimeSchema, StringMapIn, TagsIn } from '../common.js'

export const UserFieldsIn = {
  integrationName: Type.Optional(Type.String({ maxLength: 200, description: 'Default: the bot\'s chat integration' })),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  pictureUrl: Type.Optional(Type.String({ maxLength: 2048 })),
  properties: Type.Optional(StringMapIn),
  attributes: Type.Optional(StringMapIn),
}

const Body = Type.Object({ tags: TagsIn, ...UserFieldsIn }, { additionalProperties: false })

export default function createUser(app: App): void {
  app.post('/users', {
    config: { permission: 'runtime.write', installation: {} },
    schema: runtimeSchema('createUser', 'Create a user of the bot\'s chat integration (no user key: the Chat API\'s keys are the user\'s own)',
      { body: Body }, { 200: Type.Object({ user: RuntimeUserSchema }) }),
  }, async (request) => ({ user: runtimeUserView(await app.services.botChat.createUser(request.runtimeBot, request.body)) }))
}
