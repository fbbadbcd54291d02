import { Type } from 'typebox'
import type { App } from '../../types.js'
import { ListMeta, listMeta } from '../../schemas/common.js'
import { filesSchema, TagPageQuery } from './common.js'

export default function listFileTags(app: App): void {
  app.get('/tags', {
    config: { permission: 'files.read' },
    schema: filesSchema('listFileTags', 'The distinct tag names of the bot\'s files, in byte order', { querystring: TagPageQuery },
      { 200: Type.Object({ tags: Type.Array(Type.String()), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.files.listFileTags(request.filesBot.id, request.query)
    return { tags: page.items, meta: listMeta(page) }
  })
}
