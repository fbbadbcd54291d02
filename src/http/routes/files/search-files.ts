import { Type } from 'typebox'
import type { App } from '../../types.js'
import { MAX_CONTEXT_DEPTH, SEARCH_LIMIT } from '../../../domain/knowledge/knowledge-service.js'
import { MAX_QUERY_CHARS } from '../../../domain/knowledge/query.js'
import { IsoDate, JsonObjectSchema, StringMap } from '../../schemas/common.js'
import { filesSchema } from './common.js'
import { PassageMetaSchema, passageMeta } from './knowledge-common.js'

const Query = Type.Object({
  query: Type.String({ maxLength: MAX_QUERY_CHARS, description: 'Natural-language question or keywords (no query syntax)' }),
  tags: Type.Optional(StringMap(Type.String(), { description: 'Only files carrying every one of these tags (e.g. tags.kbId=…)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT.max })),
  contextDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CONTEXT_DEPTH })),
  consolidate: Type.Optional(Type.Boolean({ description: 'Accepted, ignored' })),
  includeBreadcrumb: Type.Optional(Type.Boolean({ description: 'Accepted, ignored' })),
  withContext: Type.Optional(Type.Boolean()),
})

const Passage = Type.Object({
  content: Type.String(),
  score: Type.Number(),
  meta: PassageMetaSchema,
  file: Type.Object({
    id: Type.String(), key: Type.String(), contentType: Type.String(), metadata: JsonObjectSchema,
    tags: StringMap(Type.String()), createdAt: IsoDate, updatedAt: IsoDate,
  }),
  context: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(Type.String()), text: Type.String(), offset: Type.Optional(Type.Integer()),
    type: Type.Union([Type.Literal('preceding'), Type.Literal('subsequent'), Type.Literal('current'), Type.Literal('breadcrumb')]),
  }))),
})

export default function searchFiles(app: App): void {
  app.get('/search', {
    config: { permission: 'files.read' },
    schema: filesSchema('searchFiles', 'Full-text search over the passages of the bot\'s indexed files, best first', { querystring: Query },
      { 200: Type.Object({ passages: Type.Array(Passage) }) }),
  }, async (request) => {
    const hits = await app.services.files.knowledge.search(request.filesBot.id, request.query)
    return {
      passages: hits.map((h) => ({
        content: h.content,
        score: h.score,
        meta: passageMeta(h),
        file: {
          id: h.file.id, key: h.file.key, contentType: h.file.contentType, metadata: h.file.metadata, tags: h.file.tags,
          createdAt: new Date(h.file.createdAt).toISOString(), updatedAt: new Date(h.file.updatedAt).toISOString(),
        },
        ...(h.context && { context: h.context }),
      })),
    }
  })
}
