import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeUserView } from '../../../../domain/runtime-views.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { DateField, DateQuery, PageQuery, RuntimeUserSchema, runtimeSchema, SortDirection, StringMapIn } from '../common.js'

const Query = Type.Object({
  ...PageQuery,
  conversationId: Type.Optional(Type.String({ maxLength: 200, description: 'Participants of this conversation only' })),
  tags: Type.Optional(StringMapIn),
  ...DateQuery,
  rangeField: Type.Optional(DateField),
  sortField: Type.Optional(DateField),
  sortDirection: Type.Optional(SortDirection),
})

export default function listUsers(app: App): void {
  app.get('/users', {
    config: { permission: 'runtime.read', installation: { query: { conversationId: 'conversation' } } },
    schema: runtimeSchema('listUsers', 'List the end users of all of the bot\'s integrations (dates apply to rangeField)', { querystring: Query },
      { 200: Type.Object({ users: Type.Array(RuntimeUserSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.botChat.listUsers(request.runtimeBot, request.query)
    return { users: page.items.map(runtimeUserView), meta: listMeta(page) }
  })
}
