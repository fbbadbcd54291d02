import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { IdParams, RuntimeUserSchema, runtimeSchema, StringMapPatch, TagsPatch } from '../common.js'

const Body = Type.Object({
  tags: Type.Optional(TagsPatch),
  name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  pictureUrl: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
  attributes: Type.Optional(StringMapPatch),
  properties: Type.Optional(StringMapPatch),
}, { additionalProperties: false })

export default function updateUser(app: App): void {
  app.put('/users/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'user' } } },
    schema: runtimeSchema('updateUser', 'Update a user (null removes a name, picture or map key)', { params: IdParams, body: Body },
      { 200: Type.Object({ user: RuntimeUserSchema }) }),
  }, async (request) => ({ user: runtimeUserView(await app.services.botChat.updateUser(request.runtimeBot, request.params.id, request.body)) }))
}
