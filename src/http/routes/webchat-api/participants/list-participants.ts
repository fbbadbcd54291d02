import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { webchatUserView } from '../../../../domain/webchat-api-views.js'
import { ListMeta, listMeta, NextTokenQuery } from '../../../schemas/common.js'
import { webchatParams, webchatSchema, WebchatUserSchema } from '../common.js'

export default function listParticipants(app: App): void {
  app.get('/conversations/:id/participants', {
    schema: webchatSchema('listParticipants', 'A conversation\'s participants', { params: webchatParams({ id: Type.String() }), querystring: NextTokenQuery },
      { 200: Type.Object({ participants: Type.Array(WebchatUserSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.chat.listParticipants(request.chatUser, request.params.id, request.query.nextToken)
    return { participants: page.items.map((u) => webchatUserView(u)), meta: listMeta(page) }
  })
}
