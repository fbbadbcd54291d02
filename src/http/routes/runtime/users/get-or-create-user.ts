import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { CreatedMeta, DiscriminateByTags, RuntimeUserSchema, runtimeSchema, StringMapPatch, TagsPatch } from '../common.js'
import { UserFieldsIn } from './create-user.js'

const Body = Type.Object({
  ...UserFieldsIn, tags: TagsPatch, properties: Type.Optional(StringMapPatch), attributes: Type.Optional(StringMapPatch),
  discriminateByTags: Type.Optional(DiscriminateByTags),
}, { additionalProperties: false })

export default function getOrCreateUser(app: App): void {
  app.post('/users/get-or-create', {
    config: { permission: 'runtime.write', installation: {} },
    schema: runtimeSchema('getOrCreateUser', 'The oldest user with the discriminating tags, created when none (concurrent calls create one)', { body: Body },
      { 200: Type.Object({ user: RuntimeUserSchema, meta: CreatedMeta }) }),
  }, async (request) => {
    const { value, created } = await app.services.botChat.getOrCreateUser(request.runtimeBot, request.body as typeof request.body & { tags: Record<string, string> })
    return { user: runtimeUserView(value), meta: { created } }
  })
}
