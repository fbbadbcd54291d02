import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { DateField, DateQuery, PageQuery, RuntimeConversationSchema, SortDirection, StringMapIn } from '../common.js'

export default runtimeOperation({
  id: 'listConversations', api: 'runtime', method: 'GET', path: '/conversations', permission: 'runtime.read', installation: {},
  summary: 'List the bot\'s conversations, of all of its integrations unless integrationName names one (every filter must hold; dates apply to sortField)',
  query: Type.Object({
    ...PageQuery,
    sortField: Type.Optional(DateField),
    sortDirection: Type.Optional(SortDirection),
    tags: Type.Optional(StringMapIn),
    participantIds: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 }), Type.String({ maxLength: 200 })])),
    integrationName: Type.Optional(Type.String({ maxLength: 200 })),
    channel: Type.Optional(Type.String({ maxLength: 100 })),
    ...DateQuery,
    minMessageCount: Type.Optional(Type.Integer({ minimum: 0 })),
    maxMessageCount: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  response: Type.Object({ conversations: Type.Array(RuntimeConversationSchema), meta: ListMeta }),
  run: async ({ bot, botChat, views }, { query }) => {
    const { participantIds, ...rest } = query
    const page = await botChat.listConversations(bot, {
      ...rest, ...(participantIds !== undefined && { participantIds: Array.isArray(participantIds) ? participantIds : [participantIds] }),
    })
    return { conversations: page.items.map(views.conversation), meta: listMeta(page) }
  },
})
