import { Type } from 'typebox'
import type { App } from '../../types.js'
import { KB_PAGE_SIZE } from '../../../domain/knowledge/knowledge-service.js'
import { ListMeta, listMeta, StringMap } from '../../schemas/common.js'
import { filesSchema } from './common.js'
import { KnowledgeBaseSchema, kbView } from './knowledge-common.js'

const Query = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: KB_PAGE_SIZE.max })),
  tags: Type.Optional(StringMap(Type.String(), { description: 'Every tag must match' })),
})

export default function listKnowledgeBases(app: App): void {
  app.get('/knowledge-bases', {
    config: { permission: 'files.read' },
    schema: filesSchema('listKnowledgeBases', 'List the bot\'s knowledge bases, oldest first', { querystring: Query },
      { 200: Type.Object({ knowledgeBases: Type.Array(KnowledgeBaseSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.files.knowledge.listKnowledgeBases(request.filesBot.id, request.query)
    return { knowledgeBases: page.items.map(kbView), meta: listMeta(page) }
  })
}
