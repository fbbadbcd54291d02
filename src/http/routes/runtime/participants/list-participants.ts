import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { IdParams, PageQuery, RuntimeUserSchema } from '../common.js'

export default runtimeOperation({
  id: 'listParticipants', api: 'runtime', method: 'GET', path: '/conversations/:id/participants', permission: 'runtime.read', installation: { params: { id: 'conversation' } },
  summary: 'List a conversation\'s participants (in the order they joined)',
  params: IdParams,
  query: Type.Object(PageQuery),
  response: Type.Object({ participants: Type.Array(RuntimeUserSchema), meta: ListMeta }),
  run: async ({ bot, botChat, views }, { params, query }) => {
    const page = await botChat.listParticipants(bot, params.id, query)
    return { participants: page.items.map(views.user), meta: listMeta(page) }
  },
})
