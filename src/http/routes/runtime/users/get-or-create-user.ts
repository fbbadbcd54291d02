import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { CreatedMeta, DiscriminateByTags, RuntimeUserSchema, StringMapPatch, TagsPatch } from '../common.js'
import { UserFieldsIn } from './create-user.js'

export default runtimeOperation({
  id: 'getOrCreateUser', api: 'runtime', method: 'POST', path: '/users/get-or-create', permission: 'runtime.write', installation: {},
  summary: 'The oldest user with the discriminating tags, created when none (concurrent calls create one)',
  body: Type.Object({
    ...UserFieldsIn, tags: TagsPatch, properties: Type.Optional(StringMapPatch), attributes: Type.Optional(StringMapPatch),
    discriminateByTags: Type.Optional(DiscriminateByTags),
  }, { additionalProperties: false }),
  response: Type.Object({ user: RuntimeUserSchema, meta: CreatedMeta }),
  run: async ({ bot, botChat, views }, { body }) => {
    const { value, created } = await botChat.getOrCreateUser(bot, body as typeof body & { tags: Record<string, string> })
    return { user: views.user(value), meta: { created } }
  },
})
