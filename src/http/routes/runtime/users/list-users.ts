import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { DateField, DateQuery, PageQuery, RuntimeUserSchema, SortDirection, StringMapIn } from '../common.js'

export default runtimeOperation({
  id: 'listUsers', api: 'runtime', method: 'GET', path: '/users', permission: 'runtime.read', installation: { query: { conversationId: 'conversation' } },
  summary: 'List the end users of all of the bot\'s integrations (dates apply to rangeField)',
  query: Type.Object({
    ...PageQuery,
    conversationId: Type.Optional(Type.String({ maxLength: 200, description: 'Participants of this conversation only' })),
    tags: Type.Optional(StringMapIn),
    ...DateQuery,
    rangeField: Type.Optional(DateField),
    sortField: Type.Optional(DateField),
    sortDirection: Type.Optional(SortDirection),
  }),
  response: Type.Object({ users: Type.Array(RuntimeUserSchema), meta: ListMeta }),
  run: async ({ bot, botChat, views }, { query }) => {
    const page = await botChat.listUsers(bot, query)
    return { users: page.items.map(views.user), meta: listMeta(page) }
  },
})
