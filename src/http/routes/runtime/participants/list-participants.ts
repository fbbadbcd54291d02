import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { IdParams, PageQuery, RuntimeUserSchema, runtimeSchema } from '../common.js'

export default function listParticipants(app: App): void {
  app.get('/conversations/:id/participants', {
    config: { permission: 'runtime.read', installation: { params: { id: 'conversation' } } },
    schema: runtimeSchema('listParticipants', 'List a conversation\'s participants (in the order they joined)', { params: IdParams, querystring: Type.Object(PageQuery) },
      { 200: Type.Object({ participants: Type.Array(RuntimeUserSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.botChat.listParticipants(request.runtimeBot, request.params.id, request.query)
    return { participants: page.items.map(runtimeUserView), meta: listMeta(page) }
  })
}
