import { Type } from 'typebox'
import type { App } from '../../types.js'
import { MAX_TAG_KEY_LENGTH } from '../../../domain/file-service.js'
import { ListMeta, listMeta } from '../../schemas/common.js'
import { filesSchema, TagPageQuery } from './common.js'

const Params = Type.Object({ tag: Type.String({ minLength: 1, maxLength: MAX_TAG_KEY_LENGTH, description: 'Tag name' }) })

export default function listFileTagValues(app: App): void {
  app.get('/tags/:tag/values', {
    config: { permission: 'files.read' },
    schema: filesSchema('listFileTagValues', 'The distinct values of one tag over the bot\'s files, in byte order', { params: Params, querystring: TagPageQuery },
      { 200: Type.Object({ values: Type.Array(Type.String()), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.files.listFileTagValues(request.filesBot.id, request.params.tag, request.query)
    return { values: page.items, meta: listMeta(page) }
  })
}
