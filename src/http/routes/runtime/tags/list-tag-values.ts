import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { PageQuery, runtimeSchema } from '../common.js'

const Query = Type.Object({
  ...PageQuery,
  type: Type.Union([Type.Literal('user'), Type.Literal('conversation'), Type.Literal('message')]),
})

export default function listTagValues(app: App): void {
  app.get('/tags/:key/values', {
    config: { permission: 'runtime.read', installation: {} },
    schema: runtimeSchema('listTagValues', 'Distinct values of a tag key over the bot\'s users, conversations or messages (ascending)',
      { params: Type.Object({ key: Type.String({ minLength: 1 }) }), querystring: Query },
      { 200: Type.Object({ tags: Type.Array(Type.Object({ value: Type.String() }, { additionalProperties: false })), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.botChat.listTagValues(request.runtimeBot, request.params.key, request.query.type, request.query)
    return { tags: page.items.map((value) => ({ value })), meta: listMeta(page) }
  })
}
