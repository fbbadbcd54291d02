import { Type } from 'typebox'
import type { App } from '../../types.js'
import { ListMeta, listMeta } from '../../schemas/common.js'
import { FileIdParams, filesSchema } from './common.js'
import { PassageMetaSchema, passageMeta } from './knowledge-common.js'

const PAGE = { default: 20, max: 200 }

const Query = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE.max })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE.max, description: 'Same as pageSize' })),
})

export default function listFilePassages(app: App): void {
  app.get('/:id/passages', {
    config: { permission: 'files.read' },
    schema: filesSchema('listFilePassages', 'The passages an indexed file was split into, in document order', { params: FileIdParams, querystring: Query },
      { 200: Type.Object({ passages: Type.Array(Type.Object({ id: Type.String(), content: Type.String(), meta: PassageMetaSchema })), meta: ListMeta }) }),
  }, async (request) => {
    const { files } = app.services
    const file = await files.getFile(request.filesBot.id, request.params.id)
    const page = await files.knowledge.listFilePassages(file.botId, file.id, {
      nextToken: request.query.nextToken, limit: request.query.pageSize ?? request.query.limit ?? PAGE.default,
    })
    return {
      passages: page.items.map((p) => ({ id: p.id, content: p.content, meta: passageMeta(p) })),
      meta: listMeta(page),
    }
  })
}
