import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeConversationView } from '../../../../domain/runtime-views.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { DateField, DateQuery, PageQuery, RuntimeConversationSchema, runtimeSchema, SortDirection, StringMapIn } from '../common.js'

const Query = Type.Object({
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
})

export default function listConversations(app: App): void {
  app.get('/conversations', {
    config: { permission: 'runtime.read', installation: {} },
    schema: runtimeSchema('listConversations', 'List the bot\'s conversations, of all of its integrations unless integrationName names one (every filter must hold; dates apply to sortField)', { querystring: Query },
      { 200: Type.Object({ conversations: Type.Array(RuntimeConversationSchema), meta: ListMeta }) }),
  }, async (request) => {
    const { participantIds, ...query } = request.query
    const page = await app.services.botChat.listConversations(request.runtimeBot, {
      ...query, ...(participantIds !== undefined && { participantIds: Array.isArray(participantIds) ? participantIds : [participantIds] }),
    })
    return { conversations: page.items.map(runtimeConversationView), meta: listMeta(page) }
  })
}
