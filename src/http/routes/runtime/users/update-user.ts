import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { IdParams, RuntimeUserSchema, StringMapPatch, TagsPatch } from '../common.js'

export default runtimeOperation({
  id: 'updateUser', api: 'runtime', method: 'PUT', path: '/users/:id', permission: 'runtime.write', installation: { params: { id: 'user' } },
  summary: 'Update a user (null removes a name, picture or map key)',
  params: IdParams,
  body: Type.Object({
    tags: Type.Optional(TagsPatch),
    name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    pictureUrl: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
    attributes: Type.Optional(StringMapPatch),
    properties: Type.Optional(StringMapPatch),
  }, { additionalProperties: false }),
  response: Type.Object({ user: RuntimeUserSchema }),
  run: async ({ bot, botChat, views }, { params, body }) => ({ user: views.user(await botChat.updateUser(bot, params.id, body)) }),
})
