import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { RuntimeUserSchema, StringMapIn, TagsIn } from '../common.js'

export const UserFieldsIn = {
  integrationName: Type.Optional(Type.String({ maxLength: 200, description: 'Default: the bot\'s chat integration' })),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  pictureUrl: Type.Optional(Type.String({ maxLength: 2048 })),
  properties: Type.Optional(StringMapIn),
  attributes: Type.Optional(StringMapIn),
}

export default runtimeOperation({
  id: 'createUser', api: 'runtime', method: 'POST', path: '/users', permission: 'runtime.write', installation: {},
  summary: 'Create a user of the bot\'s chat integration (no user key: the Chat API\'s keys are the user\'s own)',
  body: Type.Object({ tags: TagsIn, ...UserFieldsIn }, { additionalProperties: false }),
  response: Type.Object({ user: RuntimeUserSchema }),
  run: async ({ bot, botChat, views }, { body }) => ({ user: views.user(await botChat.createUser(bot, body)) }),
})
