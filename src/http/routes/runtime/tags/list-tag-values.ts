import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { PageQuery } from '../common.js'

export default runtimeOperation({
  id: 'listTagValues', api: 'runtime', method: 'GET', path: '/tags/:key/values', permission: 'runtime.read', installation: {},
  summary: 'Distinct values of a tag key over the bot\'s users, conversations or messages (ascending)',
  params: Type.Object({ key: Type.String({ minLength: 1 }) }),
  query: Type.Object({
    ...PageQuery,
    type: Type.Union([Type.Literal('user'), Type.Literal('conversation'), Type.Literal('message')]),
  }),
  response: Type.Object({ tags: Type.Array(Type.Object({ value: Type.String() }, { additionalProperties: false })), meta: ListMeta }),
  run: async ({ bot, botChat }, { params, query }) => {
    const page = await botChat.listTagValues(bot, params.key, query.type, query)
    return { tags: page.items.map((value) => ({ value })), meta: listMeta(page) }
  },
})
